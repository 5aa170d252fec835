/**
 * Reads IAM permissions out of synthesized templates: what a function's role
 * may do, with cross-stack references resolved to `stack/LogicalId`.
 */
import type { Template } from 'aws-cdk-lib/assertions';

type Json = unknown;

export interface Statement {
  readonly actions: string[];
  /** Each resource as `stack/LogicalId[/suffix]`, or the literal string. */
  readonly resources: string[];
}

interface Resource {
  Type: string;
  Properties?: Record<string, Json>;
}

/** Templates by stack name, to follow references between stacks. */
export type Templates = Record<string, Template>;

function resourcesOf(template: Template): Record<string, Resource> {
  return template.toJSON().Resources as Record<string, Resource>;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** A reference (Ref, GetAtt, GetStackOutput, Join) as a readable string. */
export function describeRef(
  value: Json,
  stack: string,
  templates: Templates,
): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  const node = value as Record<string, Json>;
  if ('Ref' in node) return `${stack}/${String(node.Ref)}`;
  if ('Fn::GetAtt' in node) {
    const [logicalId, attribute] = node['Fn::GetAtt'] as [string, string];
    return `${stack}/${logicalId}.${attribute}`;
  }
  if ('Fn::GetStackOutput' in node) {
    const { StackName, OutputName } = node['Fn::GetStackOutput'] as {
      StackName: string;
      OutputName: string;
    };
    return outputValue(StackName, OutputName, templates);
  }
  if ('Fn::ImportValue' in node) {
    const exportName = String(node['Fn::ImportValue']);
    for (const [name, template] of Object.entries(templates)) {
      const outputs = (template.toJSON().Outputs ?? {}) as Record<
        string,
        { Value: Json; Export?: { Name: string } }
      >;
      for (const output of Object.values(outputs)) {
        if (output.Export?.Name === exportName) {
          return describeRef(output.Value, name, templates);
        }
      }
    }
    return `import:${exportName}`;
  }
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, Json[]];
    return parts
      .map((part) => describeRef(part, stack, templates))
      .join(separator);
  }
  return JSON.stringify(value);
}

function outputValue(
  stackName: string,
  outputName: string,
  templates: Templates,
): string {
  const template = templates[stackName];
  if (!template) return `${stackName}:${outputName}`;
  const outputs = (template.toJSON().Outputs ?? {}) as Record<
    string,
    { Value: Json }
  >;
  const output = outputs[outputName];
  if (!output) return `${stackName}:${outputName}`;
  return describeRef(output.Value, stackName, templates);
}

/** The logical id of the function whose physical name is `functionName`. */
export function functionLogicalId(
  template: Template,
  functionName: string,
): string {
  for (const [id, resource] of Object.entries(resourcesOf(template))) {
    if (
      resource.Type === 'AWS::Lambda::Function' &&
      resource.Properties?.FunctionName === functionName
    ) {
      return id;
    }
  }
  throw new Error(`no function named ${functionName}`);
}

/** Every statement of the inline policies attached to a role. */
export function roleStatements(
  template: Template,
  stack: string,
  roleLogicalId: string,
  templates: Templates,
): Statement[] {
  const statements: Statement[] = [];
  for (const resource of Object.values(resourcesOf(template))) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = asArray(resource.Properties?.Roles as Json[] | undefined);
    const attached = roles.some(
      (role) =>
        typeof role === 'object' &&
        role !== null &&
        (role as { Ref?: string }).Ref === roleLogicalId,
    );
    if (!attached) continue;
    const document = resource.Properties?.PolicyDocument as {
      Statement: {
        Effect: string;
        Action: string | string[];
        Resource: Json | Json[];
      }[];
    };
    for (const statement of document.Statement) {
      if (statement.Effect !== 'Allow') continue;
      statements.push({
        actions: asArray(statement.Action),
        resources: asArray(statement.Resource).map((r) =>
          describeRef(r, stack, templates),
        ),
      });
    }
  }
  return statements;
}

/** The statements a named function's execution role holds. */
export function functionStatements(
  template: Template,
  stack: string,
  functionName: string,
  templates: Templates,
): Statement[] {
  const id = functionLogicalId(template, functionName);
  const fn = resourcesOf(template)[id]!;
  const role = fn.Properties?.Role as { 'Fn::GetAtt': [string, string] };
  return roleStatements(template, stack, role['Fn::GetAtt'][0], templates);
}

/** The environment variables of a named function, references described. */
export function functionEnvironment(
  template: Template,
  stack: string,
  functionName: string,
  templates: Templates,
): Record<string, string> {
  const id = functionLogicalId(template, functionName);
  const fn = resourcesOf(template)[id]!;
  const variables = ((fn.Properties?.Environment as { Variables?: Json })
    ?.Variables ?? {}) as Record<string, Json>;
  return Object.fromEntries(
    Object.entries(variables).map(([key, value]) => [
      key,
      describeRef(value, stack, templates),
    ]),
  );
}

/** Resources the statements allow `action` on (exact or by wildcard). */
export function resourcesFor(
  statements: readonly Statement[],
  action: string,
): string[] {
  const matches = (pattern: string) =>
    new RegExp(
      `^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`,
    ).test(action);
  return statements
    .filter((s) => s.actions.some(matches))
    .flatMap((s) => s.resources);
}

/** Every action the statements name. */
export function allActions(statements: readonly Statement[]): string[] {
  return statements.flatMap((s) => s.actions);
}
