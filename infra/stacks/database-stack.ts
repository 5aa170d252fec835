/**
 * PostgreSQL: one RDS for PostgreSQL 16 instance (Multi-AZ by default)
 * behind RDS Proxy, with one database login per kind of caller, so the
 * database itself enforces least privilege (see APPLICATION_LOGINS). The
 * owner login belongs to the migrate function alone. The migrate trigger
 * creates the group roles, and each login with the password its secret
 * holds, and grants them; the grants it must create are listed in
 * README.md. Every secret rotates every 30 days; application
 * logins rotate multi-user (a `_clone` login that is granted the
 * original), so a rotation never breaks open connections.
 */
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as triggers from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import { APPLICATION_LOGINS, FUNCTION_LOGINS } from '../../shared/db/roles.ts';
import {
  type DatabaseLogin,
  ServiceFunction,
} from '../constructs/service-function.ts';
import {
  acknowledge,
  LAMBDA_BASIC_EXECUTION,
  WILDCARD_RESOURCE,
} from '../nag.ts';
import { functionNames } from '../names.ts';
import type { DeployParameters } from '../parameters.ts';

export const DATABASE_NAME = 'inventory';
const PORT = 5432;
/** Characters a password must not contain to survive URLs and shells. */
const EXCLUDE_CHARACTERS = ` %+~\`#$&*()|[]{}:;<>?!'/@"\\,=^`;

/**
 * The application logins: who uses each, its username, and the group role
 * (NOLOGIN, created by the migrate step) that carries its privileges. One
 * definition, in shared/db/roles.ts, which the migrate step checks them by.
 */
export { APPLICATION_LOGINS };

export type ApplicationLogin = keyof typeof APPLICATION_LOGINS;

export interface DatabaseStackProps extends StackProps {
  readonly parameters: DeployParameters;
  readonly vpc: ec2.IVpc;
  readonly appSubnets: ec2.SubnetSelection;
  readonly dataSubnets: ec2.SubnetSelection;
}

export class DatabaseStack extends Stack {
  readonly instance: rds.DatabaseInstance;
  readonly proxy: rds.DatabaseProxy;
  /** The schema owner: the migrate function only. */
  readonly owner: DatabaseLogin;
  /** One login per application caller. */
  readonly logins: Record<ApplicationLogin, DatabaseLogin>;
  readonly migrateFunction: ServiceFunction;
  readonly adminFunction: ServiceFunction;

  constructor(scope: Construct, id: string, props: DatabaseStackProps) {
    super(scope, id, {
      ...props,
      terminationProtection: props.parameters.deletionProtection,
    });
    const { parameters, vpc } = props;

    const databaseSg = new ec2.SecurityGroup(this, 'DatabaseSg', {
      vpc,
      description:
        'PostgreSQL instance: reached from RDS Proxy and rotation only',
      allowAllOutbound: false,
    });
    const proxySg = new ec2.SecurityGroup(this, 'ProxySg', {
      vpc,
      description: 'RDS Proxy: reached from the functions named in code',
      allowAllOutbound: false,
    });

    const engine = rds.DatabaseInstanceEngine.postgres({
      version: rds.PostgresEngineVersion.VER_16,
    });
    const parameterGroup = new rds.ParameterGroup(this, 'Parameters', {
      engine,
      description: 'k8s-inventory PostgreSQL 16',
      parameters: {
        'rds.force_ssl': '1',
        log_min_duration_statement: '1000',
        log_lock_waits: '1',
        // A safety net under the sync's own 60 s bound: a function killed
        // mid-transaction must not hold its row locks for long.
        idle_in_transaction_session_timeout: '120000',
      },
    });

    this.instance = new rds.DatabaseInstance(this, 'Instance', {
      engine,
      instanceType: new ec2.InstanceType(parameters.databaseInstanceType),
      vpc,
      vpcSubnets: props.dataSubnets,
      securityGroups: [databaseSg],
      port: PORT,
      databaseName: DATABASE_NAME,
      credentials: rds.Credentials.fromGeneratedSecret('inventory_owner', {
        excludeCharacters: EXCLUDE_CHARACTERS,
      }),
      parameterGroup,
      multiAz: parameters.databaseMultiAz,
      storageType: rds.StorageType.GP3,
      allocatedStorage: parameters.databaseAllocatedStorageGiB,
      maxAllocatedStorage: parameters.databaseMaxAllocatedStorageGiB,
      storageEncrypted: true,
      caCertificate: rds.CaCertificate.RDS_CA_RSA2048_G1,
      backupRetention: Duration.days(parameters.databaseBackupRetentionDays),
      preferredBackupWindow: '03:00-04:00',
      preferredMaintenanceWindow: 'sun:04:30-sun:05:30',
      copyTagsToSnapshot: true,
      deleteAutomatedBackups: false,
      deletionProtection: parameters.deletionProtection,
      removalPolicy: RemovalPolicy.SNAPSHOT,
      autoMinorVersionUpgrade: true,
      publiclyAccessible: false,
      cloudwatchLogsExports: ['postgresql', 'upgrade'],
      cloudwatchLogsRetention:
        parameters.logRetentionDays as logs.RetentionDays,
    });
    const ownerSecret = this.instance.secret!;

    const rotation = {
      automaticallyAfter: Duration.days(30),
      // The application logins exist only once the migrate trigger made
      // them; the first rotation waits its 30 days.
      rotateImmediatelyOnUpdate: false,
      excludeCharacters: EXCLUDE_CHARACTERS,
    };
    this.instance.addRotationSingleUser(rotation);

    const loginSecrets = {} as Record<
      ApplicationLogin,
      secretsmanager.SecretTargetAttachment
    >;
    for (const [kind, login] of Object.entries(APPLICATION_LOGINS)) {
      const id = `${pascal(kind)}Login`;
      const secret = new rds.DatabaseSecret(this, id, {
        username: login.username,
        dbname: DATABASE_NAME,
        // Multi-user rotation logs in as the owner to rotate this login.
        masterSecret: ownerSecret,
        excludeCharacters: EXCLUDE_CHARACTERS,
      });
      // Adds host, port and engine, which rotation needs.
      const attached = new secretsmanager.SecretTargetAttachment(
        this,
        `${id}Target`,
        { secret, target: this.instance },
      );
      this.instance.addRotationMultiUser(`${id}Rotation`, {
        ...rotation,
        secret: attached,
      });
      loginSecrets[kind as ApplicationLogin] = attached;
    }

    this.proxy = this.instance.addProxy('Proxy', {
      vpc,
      vpcSubnets: props.dataSubnets,
      securityGroups: [proxySg],
      secrets: [ownerSecret, ...Object.values(loginSecrets)],
      requireTLS: true,
      iamAuth: false,
      // Leaves room for the rotation functions and an operator session.
      maxConnectionsPercent: 90,
      maxIdleConnectionsPercent: 50,
      borrowTimeout: Duration.seconds(30),
      idleClientTimeout: Duration.minutes(30),
    });
    // The proxy talks to the instance, and to Secrets Manager for the
    // logins' passwords (through the VPC endpoint when it goes that way).
    proxySg.addEgressRule(
      databaseSg,
      ec2.Port.tcp(PORT),
      'PostgreSQL to the instance',
    );
    proxySg.addEgressRule(
      ec2.Peer.ipv4(vpc.vpcCidrBlock),
      ec2.Port.tcp(443),
      'HTTPS to the VPC endpoints',
    );

    const login = (secret: secretsmanager.ISecret): DatabaseLogin => ({
      secret,
      endpoint: this.proxy,
      host: this.proxy.endpoint,
      port: PORT,
      databaseName: DATABASE_NAME,
    });
    this.owner = login(ownerSecret);
    this.logins = {
      writer: login(loginSecrets.writer),
      maintenance: login(loginSecrets.maintenance),
      reader: login(loginSecrets.reader),
      tenancy: login(loginSecrets.tenancy),
      ingest: login(loginSecrets.ingest),
      webhooks: login(loginSecrets.webhooks),
    };

    const adminSg = new ec2.SecurityGroup(this, 'AdminFunctionsSg', {
      vpc,
      description: 'Migrate and admin functions: PostgreSQL and HTTPS out',
      allowAllOutbound: true,
    });
    const common = {
      vpc,
      vpcSubnets: props.appSubnets,
      securityGroups: [adminSg],
      logLevel: parameters.logLevel,
      logRetention: parameters.logRetentionDays as logs.RetentionDays,
    };

    // Applies migrations/ at deploy, with the same runner as
    // `npm run migrate`; the SQL files travel inside the bundle, beside
    // index.js, where the handler looks for them. It reads
    // every login's secret to create that login with its password.
    const migrate = new ServiceFunction(this, 'Migrate', {
      ...common,
      entry: 'functions/migrate/handler.ts',
      functionName: functionNames(parameters.prefix).migrate,
      description: 'Applies migrations/ and the database logins at deploy',
      timeout: Duration.minutes(10),
      memorySize: 512,
      secretsThroughSdk: true,
      commandHooks: {
        beforeBundling: () => [],
        beforeInstall: () => [],
        afterBundling: (inputDir, outputDir) => [
          `cp -R "${inputDir}/migrations" "${outputDir}/migrations"`,
        ],
      },
    }).bindDatabase(this.owner);
    const loginSecretArns: Record<string, string> = {};
    for (const [kind, { role }] of Object.entries(APPLICATION_LOGINS)) {
      const secret = loginSecrets[kind as ApplicationLogin];
      secret.grantRead(migrate);
      loginSecretArns[role] = secret.secretArn;
    }
    migrate.addEnvironment(
      'DATABASE_LOGIN_SECRETS',
      this.toJsonString(loginSecretArns),
    );
    this.migrateFunction = migrate;

    new triggers.Trigger(this, 'MigrateOnDeploy', {
      handler: migrate,
      invocationType: triggers.InvocationType.REQUEST_RESPONSE,
      timeout: Duration.minutes(11),
      executeAfter: [this.instance, this.proxy],
    });

    // `aws lambda invoke` runs the same code as `npm run tenant` and
    // `npm run grant`: no bastion and no port forward needed.
    this.adminFunction = new ServiceFunction(this, 'Admin', {
      ...common,
      entry: 'functions/admin/handler.ts',
      functionName: functionNames(parameters.prefix).admin,
      description: 'Creates tenants and grants (npm run tenant / grant)',
      timeout: Duration.seconds(60),
    }).bindDatabase(this.logins[FUNCTION_LOGINS.admin]);

    this.acknowledgeDatabaseFindings(parameters);
  }

  private acknowledgeDatabaseFindings(parameters: DeployParameters): void {
    acknowledge(
      this.instance,
      'AwsSolutions-RDS11',
      'Clients reach PostgreSQL only through RDS Proxy, whose PostgreSQL port is always 5432, from security groups named in code; another instance port would hide nothing.',
    );
    if (!parameters.databaseMultiAz) {
      acknowledge(
        this.instance,
        'AwsSolutions-RDS3',
        'Multi-AZ was turned off by the databaseMultiAz=false deploy parameter (a non-production deployment).',
      );
    }
    if (!parameters.deletionProtection) {
      acknowledge(
        this.instance,
        'AwsSolutions-RDS10',
        'Deletion protection was turned off by the deletionProtection=false deploy parameter (a disposable deployment).',
      );
    }
    const logRetention = this.node.tryFindChild(
      'LogRetentionaae0aa3c5b4d4f87b02d85b201efdd8a',
    );
    if (logRetention) {
      acknowledge(
        logRetention,
        LAMBDA_BASIC_EXECUTION,
        'The CDK log-retention function only writes its own logs with it.',
      );
      acknowledge(
        logRetention,
        WILDCARD_RESOURCE,
        'The CDK log-retention function sets retention on log groups RDS creates, whose names are not known before the instance exists.',
      );
    }
  }
}

/** `maintenance` → `Maintenance`. */
function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
