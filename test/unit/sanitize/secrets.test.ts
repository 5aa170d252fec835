import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  sanitizeAnnotationValue,
  sanitizeLogLines,
  sanitizeMessage,
} from '../../../shared/sanitize/secrets.ts';

/** [rule, input, expected output] */
type Row = [string, string, string];

const R = REDACTED;

const redacted: Row[] = [
  // key: value and key=value, names normalized
  ['key: value to end of line', 'password: hunter2 is set', `password: ${R}`],
  [
    'key=value to the next space',
    'user=bob password=hunter2 x=1',
    `user=bob password=${R} x=1`,
  ],
  ['camelCase name', 'clientSecret=abc', `clientSecret=${R}`],
  ['camelCase name, key: value', 'clientSecret: abc def', `clientSecret: ${R}`],
  ['PascalCase name', 'DbPassword: hunter2', `DbPassword: ${R}`],
  ['dashed name', 'x-api-key: abcdef', `x-api-key: ${R}`],
  ['upper-case snake name', 'DB_PASS=secret1 next', `DB_PASS=${R} next`],
  [
    'dotted name',
    'spring.datasource.password=hunter2',
    `spring.datasource.password=${R}`,
  ],
  [
    'accessToken, quoted value taken whole',
    'accessToken="abc def" rest',
    `accessToken="${R}" rest`,
  ],
  ['single-quoted value', "api_key: 'value with spaces'", `api_key: '${R}'`],
  ['passwd', 'passwd=hunter2', `passwd=${R}`],
  ['pwd', 'pwd=hunter2', `pwd=${R}`],
  ['passphrase', 'passphrase: correct horse', `passphrase: ${R}`],
  ['privateKey', 'privateKey=abc123', `privateKey=${R}`],
  ['access_key', 'access_key=abc123', `access_key=${R}`],
  ['aws_secret_key', 'aws_secret_key = 23456789a1', `aws_secret_key = ${R}`],
  ['credentials', 'credentials: user1:pw1', `credentials: ${R}`],
  ['session', 'session=8f2ab71c', `session=${R}`],
  ['bearer as a name', 'bearer: abc.def', `bearer: ${R}`],
  ['numbered name', 'password2=hunter2', `password2=${R}`],
  ['value ends at &', 'a=1&token=abc123&b=2', `a=1&token=${R}&b=2`],
  ['value ends at ;', 'token=abc123;b=2', `token=${R};b=2`],
  ['key= value (space after =)', '_authToken= 743b294a', `_authToken= ${R}`],
  ['line-initial key = value', 'password = hunter2', `password = ${R}`],
  [
    'indented line-initial key = value',
    '    secret = hunter2',
    `    secret = ${R}`,
  ],
  ['export line', 'export API_TOKEN = abc123', `export API_TOKEN = ${R}`],
  ['Go :=', 'apikey := "hunter2"', `apikey := "${R}"`],
  [
    'Kubernetes error text (accepted over-hiding)',
    'failed to get secret: secrets "foo" not found',
    `failed to get secret: ${R}`,
  ],
  // glued environment names
  ['PGPASSWORD', 'PGPASSWORD=hunter2 psql -h db', `PGPASSWORD=${R} psql -h db`],
  ['MYSQL_PWD', 'MYSQL_PWD=hunter2', `MYSQL_PWD=${R}`],
  ['GITHUBTOKEN', 'GITHUBTOKEN=abc123', `GITHUBTOKEN=${R}`],
  ['APPSECRET', 'APPSECRET: abc123', `APPSECRET: ${R}`],
  // JSON
  [
    'JSON key',
    '{"password":"x","user":"bob"}',
    `{"password":"${R}","user":"bob"}`,
  ],
  ['JSON key in any case', '{"PASSWORD": "x"}', `{"PASSWORD": "${R}"}`],
  [
    'JSON number value',
    '{"Password": 12345, "user": "bob"}',
    `{"Password": ${R}, "user": "bob"}`,
  ],
  [
    'JSON key, space before colon',
    '"credentials" : "0afae57f"',
    `"credentials" : "${R}"`,
  ],
  [
    'JSON nested object',
    '{"db": {"password": "x"}}',
    `{"db": {"password": "${R}"}}`,
  ],
  [
    'escaped JSON inside a string',
    'body={\\"password\\":\\"hunter2\\",\\"u\\":1}',
    `body={\\"password\\":\\"${R}\\",\\"u\\":1}`,
  ],
  [
    'escaped docker auths',
    '{\\"auths\\":{\\"ghcr.io\\":{\\"auth\\":\\"dXNlcjpwYXNzd29yZA==\\"}}}',
    `{\\"auths\\":{\\"ghcr.io\\":{\\"auth\\":\\"${R}\\"}}}`,
  ],
  [
    'docker auths',
    '{"auths":{"r.io":{"username":"u","password":"p","auth":"dTpw"}}}',
    `{"auths":{"r.io":{"username":"u","password":"${R}","auth":"${R}"}}}`,
  ],
  // Ruby/PHP =>
  [
    'Ruby hash',
    "params => {'password' => 'hunter2', 'user' => 'bob'}",
    `params => {'password' => '${R}', 'user' => 'bob'}`,
  ],
  ['Ruby symbol', ':password => "hunter2"', `:password => "${R}"`],
  [
    'PHP array',
    "array('db_password' => 'hunter2', 'host' => 'db')",
    `array('db_password' => '${R}', 'host' => 'db')`,
  ],
  ['bare =>', 'token => abc123, next', `token => ${R}, next`],
  // Authorization in every dump shape
  [
    'Authorization header, scheme kept',
    'Authorization: Bearer abc.def',
    `Authorization: Bearer ${R}`,
  ],
  [
    'Authorization header, token scheme',
    'Authorization: token abc123',
    `Authorization: ${R}`,
  ],
  [
    'Authorization, any scheme',
    'Authorization: Digest username="bob", response="abc"',
    `Authorization: ${R}`,
  ],
  [
    'Authorization, Negotiate',
    'Authorization: Negotiate YIIabc',
    `Authorization: ${R}`,
  ],
  [
    'Authorization in JSON',
    '{"Authorization":"Basic dXNlcjpwYXNz"}',
    `{"Authorization":"Basic ${R}"}`,
  ],
  [
    'Authorization in JSON, token scheme',
    '{"authorization":"token abc123"}',
    `{"authorization":"${R}"}`,
  ],
  [
    'Authorization assignment',
    'authorization = "Bearer abc.def"',
    `authorization = "Bearer ${R}"`,
  ],
  [
    'Authorization assignment, bare',
    'Authorization=abc123 next',
    `Authorization=${R} next`,
  ],
  // An unquoted assignment: the scheme and its credential, whatever the
  // scheme word (once only the word went).
  [
    'Authorization assignment, ApiKey scheme',
    'AUTHORIZATION=ApiKey k3ySecretValue9',
    `AUTHORIZATION=${R}`,
  ],
  [
    'Authorization assignment, SSWS scheme',
    'authorization=SSWS 00okta-secret-token',
    `authorization=${R}`,
  ],
  [
    'Authorization assignment, a custom scheme',
    'Authorization=Custom abc-secret-xyz',
    `Authorization=${R}`,
  ],
  [
    'Authorization assignment, a credential of letters after a scheme word',
    'Authorization=ApiKey hunterpass',
    `Authorization=${R}`,
  ],
  [
    'Authorization assignment, the fields after it kept',
    'AUTHORIZATION=ApiKey k3ySecretValue9 user=bob retry=2',
    `AUTHORIZATION=${R} user=bob retry=2`,
  ],
  [
    'Authorization assignment, AWS SigV4 params to their last',
    'Authorization=AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7 status=403',
    `Authorization=${R} status=403`,
  ],
  [
    'Authorization assignment, Digest params',
    'Authorization=Digest username="bob", response="6629fae49393a053" uri=/x',
    `Authorization=${R} uri=/x`,
  ],
  [
    'Proxy-Authorization assignment, a custom scheme',
    'Proxy-Authorization=Custom abc-secret-xyz next',
    `Proxy-Authorization=${R} next`,
  ],
  [
    'Authorization as an env var, a custom scheme',
    'name=HTTP_AUTHORIZATION value=SSWS 00okta-secret-token next=1',
    `name=HTTP_AUTHORIZATION value=${R} next=1`,
  ],
  [
    'Authorization assignment, bare, a field after it',
    'Authorization=k3y9Secret user=bob',
    `Authorization=${R} user=bob`,
  ],
  [
    'Authorization assignment, bare, a word and a colon after it',
    'Authorization=k3y9Secret failed: 401 Unauthorized',
    `Authorization=${R} failed: 401 Unauthorized`,
  ],
  [
    'Go header map',
    'headers: map[Accept:[*/*] Authorization:[Token abc123] User-Agent:[Go]]',
    `headers: map[Accept:[*/*] Authorization:[${R}] User-Agent:[Go]]`,
  ],
  [
    'Go header map, Basic',
    'map[Authorization:[Basic dXNlcjpwYXNz]]',
    `map[Authorization:[Basic ${R}]]`,
  ],
  [
    'json.Marshal(http.Header)',
    '{"Authorization":["Digest abc"],"Accept":["*/*"]}',
    `{"Authorization":["${R}"],"Accept":["*/*"]}`,
  ],
  [
    'json.Marshal(http.Header), Basic',
    'h={"Authorization":["Basic dXNlcjpwYXNz"]}',
    `h={"Authorization":["Basic ${R}"]}`,
  ],
  [
    'Go %#v',
    'http.Header{"Authorization":[]string{"Token abc123"}, "Accept":[]string{"*/*"}}',
    `http.Header{"Authorization":[]string{"${R}"}, "Accept":[]string{"*/*"}}`,
  ],
  [
    'escaped json.Marshal(http.Header)',
    'msg="{\\"Authorization\\":[\\"Digest abc\\"]}"',
    `msg="{\\"Authorization\\":[\\"${R}\\"]}"`,
  ],
  [
    'escaped %#v',
    'e="http.Header{\\"Authorization\\":[]string{\\"Token abc\\"}}"',
    `e="http.Header{\\"Authorization\\":[]string{\\"${R}\\"}}"`,
  ],
  [
    'quoted header in a curl line',
    'curl -H "Token: 3fea6af1" -d "content=hello"',
    `curl -H "Token: ${R}" -d "content=hello"`,
  ],
  ['Cookie header', 'Cookie: session_id=abc123; theme=dark', `Cookie: ${R}`],
  [
    'Set-Cookie header',
    'Set-Cookie: sid=abc123; Path=/; HttpOnly',
    `Set-Cookie: ${R}`,
  ],
  // scheme + credential as one unit
  ['api_key=Bearer x', 'api_key=Bearer xyz rest', `api_key=${R} rest`],
  ['--token Bearer x', '--token Bearer xyz next', `--token ${R} next`],
  [
    'Bearer anywhere',
    'calling with Bearer abc.def-ghi',
    `calling with Bearer ${R}`,
  ],
  [
    'Basic anywhere',
    'Liveness probe failed: Basic dXNlcjpwYXNz',
    `Liveness probe failed: Basic ${R}`,
  ],
  // URL-encoded pairs
  [
    'URL-encoded =',
    'password%3Dhunter2%26user%3Dbob',
    `password%3D${R}%26user%3Dbob`,
  ],
  [
    // The escape stays whole: once it went with the run, and `a=` lost
    // its `=`.
    'a random run after a URL escape',
    'q=a%3Dk9Xb2LmQ7vRt4ZpW8sYc3NhJ&b=1',
    `q=a%3D${R}&b=1`,
  ],
  [
    'a random run after an encoded delimiter',
    'password%3D%26k9Xb2LmQ7vRt4ZpW8sYc3NhJ#',
    `password%3D%26${R}#`,
  ],
  [
    'URL-encoded, after %26',
    'form=user%3Dbob%26password%3Dhunter2',
    `form=user%3Dbob%26password%3D${R}`,
  ],
  ['URL-encoded : and space', 'token%3A%20abc123 end', `token%3A%20${R} end`],
  [
    'URL-encoded key: value inside the value of another key',
    'x%3A%20password%3A%20hunter2',
    `x%3A%20password%3A%20${R}`,
  ],
  [
    'URL-encoded Authorization: the scheme and its credential as one unit',
    'Authorization%3A%20Bearer%20a1b2c3d4e5f6a7b8c9d0e1f2',
    `Authorization%3A%20Bearer%20${R}`,
  ],
  [
    'URL-encoded api_key=Bearer x',
    'api_key%3DBearer%20a1b2c3d4e5f6',
    `api_key%3DBearer%20${R}`,
  ],
  [
    'URL-encoded api_key=Bearer x, a short credential',
    'api_key%3DBearer%20xyz%26page%3D2',
    `api_key%3D${R}%26page%3D2`,
  ],
  [
    'URL-encoded key: value takes the whole value',
    'password%3A%20correct%20horse%20battery%20staple',
    `password%3A%20${R}`,
  ],
  [
    'URL-encoded key: value in a query ends at the raw &',
    '/search?q=password%3A%20correct%20horse&page=2',
    `/search?q=password%3A%20${R}&page=2`,
  ],
  [
    'URL-encoded form body, + as the blank',
    'body=Authorization%3A+Bearer+a1b2c3d4e5f6&x=1',
    `body=Authorization%3A+Bearer+${R}&x=1`,
  ],
  [
    'URL-encoded quoted value taken whole',
    'password%3D%22correct%20horse%22%26user%3Dbob',
    `password%3D%22${R}%22%26user%3Dbob`,
  ],
  [
    'URL-encoded Bearer anywhere',
    'redirect?h=Bearer%20a1b2c3d4e5f6',
    `redirect?h=Bearer%20${R}`,
  ],
  // nested key=value, two levels
  [
    'logfmt msg',
    'msg="login ok user=bob pass=hunter2" level=info',
    `msg="login ok user=bob pass=${R}" level=info`,
  ],
  [
    'URL query',
    'GET /login?user=bob&password=hunter2 200',
    `GET /login?user=bob&password=${R} 200`,
  ],
  [
    'URL query in a value',
    'url=https://h/cb?code=1&client_secret=abc123 status=302',
    `url=https://h/cb?code=1&client_secret=${R} status=302`,
  ],
  [
    'two levels',
    `outer="mid='inner password=x1' y=1"`,
    `outer="mid='inner password=${R}' y=1"`,
  ],
  [
    'nested key: value ends with its string',
    'msg="token: abc def" level=info',
    `msg="token: ${R}" level=info`,
  ],
  [
    // Once read as opened and closed by the one `\"`, and written twice.
    'a line that ends on an escaped quote keeps it once',
    'auth failed msg=\\"',
    'auth failed msg=\\"',
  ],
  [
    'a subscript assignment',
    "$_POST['password'] = 'hunter2'",
    `$_POST['password'] = '${R}'`,
  ],
  [
    'a subscript assignment, double quotes, unquoted value',
    'os.environ["DB_PASSWORD"]=hunter2x',
    `os.environ["DB_PASSWORD"]=${R}`,
  ],
  // A name and its value as two fields (Kubernetes env vars, dumped).
  [
    'an env var as JSON',
    '{"name":"DB_PASSWORD","value":"hunter2x"},{"name":"LOG_LEVEL","value":"debug"}',
    `{"name":"DB_PASSWORD","value":"${R}"},{"name":"LOG_LEVEL","value":"debug"}`,
  ],
  [
    'an env var as escaped JSON',
    'msg="{\\"name\\":\\"API_TOKEN\\",\\"value\\":\\"hunter2x\\"}"',
    `msg="{\\"name\\":\\"API_TOKEN\\",\\"value\\":\\"${R}\\"}"`,
  ],
  [
    'an env var as YAML',
    '- name: DB_PASSWORD\n  value: correct horse battery',
    `- name: DB_PASSWORD\n  value: ${R}`,
  ],
  [
    "an env var as Go's %+v",
    '[{Name:DB_PASSWORD Value:hunter2x ValueFrom:nil}]',
    `[{Name:DB_PASSWORD Value:${R}`,
  ],
  [
    'a name and value in logfmt',
    'name=SECRET_KEY value=hunter2x',
    `name=SECRET_KEY value=${R}`,
  ],
  // Elements and DSNs.
  [
    'an XML element',
    '<password>hunter2x</password>',
    `<password>${R}</password>`,
  ],
  [
    'an XML element with attributes',
    '<token type="bearer">hunter2x</token>',
    `<token type="bearer">${R}</token>`,
  ],
  [
    "a Go MySQL driver's DSN",
    'dsn=app:hunter2x@tcp(db:3306)/orders',
    `dsn=app:${R}@tcp(db:3306)/orders`,
  ],
  [
    "a Go MySQL driver's DSN, the password holding @",
    'dsn user:pa@ssLeakWord@tcp(db:3306)/orders',
    `dsn user:${R}@tcp(db:3306)/orders`,
  ],
  // One-letter password flags of the commands that read them.
  [
    'mysql -p, glued',
    'mysql -h db -P 3306 -uroot -pS3cret',
    `mysql -h db -P 3306 -uroot -p${R}`,
  ],
  [
    'mysqldump -p, quoted',
    'mysqldump -uroot -p"a b c" shop > dump.sql',
    `mysqldump -uroot -p${R} shop > dump.sql`,
  ],
  [
    'redis-cli -a',
    'redis-cli -h cache -a S3cret ping',
    `redis-cli -h cache -a ${R} ping`,
  ],
  [
    'a registry login -p',
    'docker login -u bob -p S3cret registry.example.com',
    `docker login -u bob -p ${R} registry.example.com`,
  ],
  ['sshpass -p', 'sshpass -p S3cret ssh host', `sshpass -p ${R} ssh host`],
  // flags
  ['flag = form', '--password=x1 next', `--password=${R} next`],
  ['flag space form', 'app --token x2', `app --token ${R}`],
  ['compound flag', 'app --db-password x3', `app --db-password ${R}`],
  ['client secret flag', 'app --client-secret x4', `app --client-secret ${R}`],
  ['github token flag', 'app --github-token x5', `app --github-token ${R}`],
  [
    'quoted flag value',
    'app --password "a b c" -v',
    `app --password "${R}" -v`,
  ],
  ['camelCase flag', 'app -dbPassword x6', `app -dbPassword ${R}`],
  [
    'curl -u',
    'curl -u elastic:P@ssw0rd$1 https://localhost:9200',
    `curl -u elastic:${R} https://localhost:9200`,
  ],
  [
    // A stray quote after the password once hid it from the flag's rule
    // (found by the run-twice property: only a second pass redacted it).
    'curl -u with a stray quote after the password',
    "curl -u :hunter2,password:x' https://api",
    `curl -u :${R}' https://api`,
  ],
  [
    'curl --user quoted',
    'curl --user "j.smith:dB2yF6" "https://api"',
    `curl --user "j.smith:${R}" "https://api"`,
  ],
  // PEM, URLs
  [
    'PEM block',
    'key -----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----\nafter',
    `key ${R}\nafter`,
  ],
  [
    'PEM block, OpenSSH',
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----',
    R,
  ],
  [
    'PEM block cut short',
    'cut -----BEGIN PRIVATE KEY-----\nMIIabc',
    `cut ${R}`,
  ],
  [
    // The backstop hides the run from `//` on, and the mark it leaves
    // stands where a URL's password does: the next pass hides the rest.
    'a hidden run where a password would stand',
    'dial A://://k9Xb2LmQ7vRt4ZpW8sYc3NhJ!0@h',
    `dial A://:${R}@h`,
  ],
  [
    // The run glued to the key kept the key from being read as one, and
    // hunter2 was shown, until the text was sanitized again.
    'a secret name right after a random run',
    "k9Xb2LmQ7vRt4ZpW8sYc3NhJ'password'=hunter2",
    `${R}'password'=${R}`,
  ],
  [
    'URL credentials',
    'dial postgres://app:pa55@db/x',
    `dial postgres://app:${R}@db/x`,
  ],
  [
    'URL credentials, empty user',
    'rediss://:pw@cache:6380',
    `rediss://:${R}@cache:6380`,
  ],
  [
    'URL credentials, redis',
    'redis://:pw@cache:6379/0',
    `redis://:${R}@cache:6379/0`,
  ],
  [
    'URL credentials, amqp',
    'amqp://user:pa55@mq/vhost',
    `amqp://user:${R}@mq/vhost`,
  ],
  // A URL's userinfo runs to the last `@` of its authority.
  [
    'URL password holding @, its host kept',
    'dial postgres://svc:Sup3r@Secr3tTail@pg.prod:5432/orders failed',
    `dial postgres://svc:${R}@pg.prod:5432/orders failed`,
  ],
  [
    'URL password holding @, redis',
    'redis://default:abc@def@redis:6379/0',
    `redis://default:${R}@redis:6379/0`,
  ],
  [
    'URL password holding @, in an assignment',
    'DATABASE_URL=postgres://app:p@ssw0rd@db/app',
    `DATABASE_URL=postgres://app:${R}@db/app`,
  ],
  [
    'URL user holding @ (an email address)',
    'smtp://alerts@corp.example:Sm7pP4ss@smtp.example:587',
    `smtp://alerts@corp.example:${R}@smtp.example:587`,
  ],
  [
    'URL password holding @, in JSON beside an email address',
    '{"url":"postgres://app:p@ss@db/x","owner":"ops@corp.example"}',
    `{"url":"postgres://app:${R}@db/x","owner":"ops@corp.example"}`,
  ],
  [
    'URL password holding @, as an earlier version left it',
    `dial postgres://svc:${R}@Secr3tTail@pg.prod:5432/orders`,
    `dial postgres://svc:${R}@pg.prod:5432/orders`,
  ],
  [
    'Slack webhook URL',
    'post https://hooks.slack.com/services/T000/B000/XXXXabc',
    `post https://hooks.slack.com/services/${R}`,
  ],
  [
    'Discord webhook URL',
    'https://discord.com/api/webhooks/123/abcDEF',
    `https://discord.com/api/webhooks/${R}`,
  ],
  // token shapes
  ['JWT', 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln', `jwt ${R}`],
  ['Slack xoxb-', 'tok xoxb-1234-5678-abcdef', `tok ${R}`],
  ['Slack xoxp-', 'xoxp-572370529330-573807301142', R],
  [
    'Slack bot token in a name',
    'deployment "xoxb-2364781095-2364781095123-AbCdEf"',
    `deployment "${R}"`,
  ],
  ['AWS AKIA', 'id AKIAIOSFODNN7EXAMPLE used', `id ${R} used`],
  ['AWS ASIA', 'ASIAIOSFODNN7EXAMPL2', R],
  ['Vault hvs.', 'hvs.CAESIJ1234567890abcdefghijkl', R],
  ['Vault hvb.', 'hvb.AAAAAQJ1234567890abcdefgh', R],
  ['sk- key', 'key sk-proj-Abcdefghijklmnop1234567890', `key ${R}`],
  [
    'sk- hex key',
    'key sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0 used',
    `key ${R} used`,
  ],
  ['sk- lower-case key', 'sk-abcdefghijklmnopqrstuvwxyz0123456789', R],
  [
    'sk-proj- lower-case key',
    'using sk-proj-abcdefghijklmnopqrstuvwxyz0123456789',
    `using ${R}`,
  ],
  [
    'Anthropic sk-ant-api03- key',
    'client sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz_0123456789abcdefghijklmnopqrstuvwxaa ready',
    `client ${R} ready`,
  ],
  // An ambiguous key keeps a short number (a count), not a long one: a
  // one-time code, a numeric password, a session id.
  ['ambiguous token, six digits', 'token: 839201', `token: ${R}`],
  ['ambiguous pass, eight digits', 'pass: 12345678', `pass: ${R}`],
  ['ambiguous session id', 'session=123456789012', `session=${R}`],
  ['GitHub ghp_', 'ghp_1234567890abcdefghijABCDEFGHIJ123456', R],
  ['GitHub fine-grained', 'github_pat_11ABCDEFG0123456789_abcdefghij', R],
  ['GitLab glpat-', 'glpat-Abcdefghij1234567890', R],
  ['Google AIza', 'AIzaSyA1234567890abcdefghijklmnopqrstuv', R],
  ['npm_', 'npm_abcdefghijABCDEFGHIJ1234567890123456', R],
  ['Hugging Face hf_', 'hf_abcdefghijABCDEFGHIJ1234567890abcd', R],
  ['Stripe sk_live_', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', R],
  // backstop
  [
    'high-entropy backstop',
    'mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4',
    `mimi=${R}`,
  ],
  ['high-entropy backstop, bare', 'got k9Xb2LmQ7vRt4ZpW8sYc3NhJ', `got ${R}`],
  [
    'backstop on a random public key (accepted over-hiding)',
    'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
    `public_key = "${R}"`,
  ],
  // PEM body lines, each sanitized as a line of its own
  [
    'PEM body line cut into short pieces by /',
    'RF26XPzFBjFq2jSS/fBM8cT75/80kaJDezrkgR/idbQR7IVCl/HNZuf5G8ZDthfM',
    R,
  ],
  [
    'indented PEM body line',
    '    RF26XPzFBjFq2jSS/fBM8cT75/80kaJDezrkgR/idbQR7IVCl/HNZuf5G8ZDthfM',
    `    ${R}`,
  ],
  [
    'PEM body line as a JSON list item',
    '  "RF26XPzFBjFq2jSS/fBM8cT75/80kaJDezrkgR/idbQR7IVCl/HNZuf5G8ZDthfM",',
    `  "${R}",`,
  ],
  ['short last PEM line', 'Bodt2ALDsWc85Q/WzGPSzQiX', R],
  ['short last PEM line without digits', 'VTofxpzcXUOigoOVjHdTacpLeoIH', R],
  ['short last PEM line, padded', 'LivLuODG//bkWnLvpw1KjrU=', R],
  ['last PEM line of 20 with its padding', 'JG3EWcYg2qXpuSIfUg==', R],
];

/** Texts that must come back unchanged. */
const survivors: [string, string][] = [
  ['ambiguous token: 5', 'token: 5'],
  ['ambiguous, a count of five digits', 'session: 86400'],
  ['ambiguous, a duration', 'token: 300s'],
  ['ambiguous auth: true', 'auth: true'],
  ['ambiguous cookie: none', 'cookie: none'],
  ['ambiguous, first word decides', 'auth: failed for user bob'],
  ['ambiguous session=disabled', 'session=disabled'],
  ['ambiguous --auth true', 'app --auth true'],
  ['look-alike token_count', 'token_count=5'],
  // A Slack token's first group is digits; a name that starts with xoxb- is a name.
  [
    'workload named xoxb-notifier',
    'deployment "xoxb-notifier" scaled to 3 replicas',
  ],
  ['workload named xoxp-relay-7', 'Scaled up replica set xoxp-relay-7c9f to 2'],
  ['look-alike tokenCount', 'tokenCount: 7'],
  ['look-alike auth_method', 'auth_method: oidc'],
  ['look-alike password_policy', 'password_policy: strict'],
  ['look-alike first_pass', 'first_pass: true'],
  ['look-alike secretName', 'secretName: db-creds'],
  ['look-alike --token-ttl', 'app --token-ttl 5m'],
  ['look-alike --password-file', 'app --password-file /run/secrets/pw'],
  ['look-alike --sort-key', 'app --sort-key name'],
  ['OLDPWD is a directory', 'OLDPWD=/home/app'],
  [
    'image digest',
    'image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  ],
  [
    'image reference with digest',
    'Pulling ghcr.io/org/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  ],
  ['commit SHA', 'commit 3e1f2b4c5d6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c'],
  ['UUID', 'uid 123e4567-e89b-12d3-a456-426614174000'],
  [
    'Helm checksum annotation',
    'checksum/secret: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  ],
  [
    'WWW-Authenticate challenge',
    'WWW-Authenticate: Bearer realm="api", error="invalid_token"',
  ],
  ['already redacted', `password=${R}`],
  ['already redacted JSON', `{"password":"${R}"}`],
  ['already masked', 'password: ********'],
  [
    'placeholder, shell variable',
    '//registry.npmjs.org/:_authToken=\u0024{NPM_TOKEN}',
  ],
  ['placeholder <...>', 'curl -u <user:password> https://test.com'],
  ['empty value', 'api_key = ""'],
  ['placeholder XXXX', 'Authorization: Bearer XXXXXXXXXXXX'],
  ['prose: bearer token', 'bearer token missing'],
  ['prose: basic auth', 'basic authentication failed'],
  ['prose: invalid token', 'Error: failed to authenticate: invalid token'],
  ['ssh URL without password', 'ssh://git@github.com/org/repo.git'],
  ['a == comparison', 'if token == nil'],
  ['a == comparison on a subscript', "if params['token'] == nil"],
  ['an ordinary env var', '{"name":"LOG_LEVEL","value":"debug"}'],
  [
    'an ambiguous env var, obviously harmless',
    '{"name":"AUTH","value":"true"}',
  ],
  [
    'an env var from a secret: its reference, no value',
    '{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"db","key":"password"}}}',
  ],
  [
    'an element that only mentions a secret name',
    '<title>password reset</title>',
  ],
  ['a DSN with no password', 'dial app@tcp(db:3306)/orders'],
  // An `@` outside a URL's authority is not userinfo.
  ['an email address', 'paging ops@corp.example: user@host said hi'],
  [
    'an @ in a URL query',
    'GET https://api.example.com:8443?notify=ops@corp.example',
  ],
  ['an @ in a URL fragment', 'see https://example.com:443#user@host'],
  ['an @ in a URL path', 'go get https://example.com/mod/path@v2.1.0'],
  ['a URL with a user and no password', 'dial postgres://app@db:5432/orders'],
  [
    'a URL with no password, then an email address',
    'dial https://app@db.example:8443/x failed, paged oncall@corp.example',
  ],
  ['mysql -p alone, which prompts', 'mysql -uroot -p shop'],
  ['mysql --skip-password', 'mysql --skip-password -h db'],
  ['mysql -p with a placeholder', 'mariadb -uroot -p$MYSQL_ROOT_PASSWORD'],
  ['-p of another command after mysql', 'mysql -h db | grep -p x'],
  ["docker's -p elsewhere, a port", 'docker run -p 8080:80 nginx'],
  [
    'probe failure',
    'Readiness probe failed: Get "http://10.0.0.1:8080/healthz": dial tcp 10.0.0.1:8080: connect: connection refused',
  ],
  [
    'image pull failure',
    'Failed to pull image "registry.example.com/app:v1.2.3": rpc error: code = NotFound',
  ],
  [
    'missing secret volume',
    'MountVolume.SetUp failed for volume "db-creds" : secret "db-creds" not found',
  ],
  ['pod name', 'Created pod: api-6f7d8b9c4-x2k4p'],
  [
    'scheduling',
    'Successfully assigned shop/api-6f7d8b9c4-x2k4p to ip-10-0-1-23.eu-west-1.compute.internal',
  ],
  ['scaling', 'Scaled up replica set api-6f7d8b9c4 to 3'],
  [
    'back-off',
    'Back-off restarting failed container app in pod web-1_shop(1a2b)',
  ],
  [
    'logfmt',
    'level=info ts=2026-10-01T11:00:00.123Z caller=main.go:42 msg="started"',
  ],
  [
    'Go source path',
    'k8s.io/client-go/tools/cache/reflector.go:229: Failed to watch *v1.Pod',
  ],
  [
    'trace ids',
    'trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7',
  ],
  ['ULID', 'request 01ARZ3NDEKTSV4RRFFQ69G5FAV done'],
  [
    'Kubernetes resource path',
    '/apis/apps/v1/namespaces/shop/deployments/api-gateway',
  ],
  ['sk- lower-case name', 'node sk-worker-pool-1234567890abc ready'],
  [
    'sk- Kubernetes name with hashes',
    'node sk-worker-pool-7d9f8c6b5-x2x4z ready',
  ],
  ['camelCase identifiers', 'NodeHasSufficientMemory FailedCreatePodSandBox'],
  // a line of its own that is not base64
  ['camelCase name on a line of its own', 'NodeHasSufficientMemory'],
  ['event reason on a line of its own', 'FailedCreatePodSandBox'],
  ['DNS policy on a line of its own', 'ClusterFirstWithHostNet'],
  [
    'AWS policy name on a line of its own',
    'AmazonEC2ContainerRegistryReadOnly',
  ],
  [
    'Java path on a line of its own',
    'org/springframework/boot/SpringApplication',
  ],
  [
    'kubelet volume path on a line of its own',
    '/var/lib/kubelet/pods/123e4567-e89b-12d3-a456-426614174000/volumes/kubernetes.io~secret/db-creds',
  ],
  ['pod name on a line of its own', 'coredns-5d78c9869d-x2x4z'],
  [
    'namespaced pod name on a line of its own',
    'kube-system/coredns-5d78c9869d-x2x4z',
  ],
  [
    'URL on a line of its own',
    'https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/kubelet.go',
  ],
  [
    'image reference with digest on a line of its own',
    'ghcr.io/org/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  ],
  // URL-encoded pairs keep what their plain form keeps
  ['URL-encoded token: 5', 'token%3A%205'],
  [
    'URL-encoded auth: failed for user bob',
    'auth%3A%20failed%20for%20user%20bob',
  ],
  ['URL-encoded cookie: none', '/set?c=cookie%3A%20none&x=1'],
  [
    'URL-encoded look-alike names',
    'q=token_count%3D5%26tokenCount%3D7%26auth_method%3Doidc%26password_policy%3Dstrict%26first_pass%3Dtrue',
  ],
  ['URL-encoded prose: bearer token', 'q=bearer%20token%20missing'],
  ['empty', ''],
];

/** Documented gaps: the secret still shows. A fix must update the docs. */
const knownGaps: [string, string, string][] = [
  ['YAML block scalar continuation', 'password: |\n  hunter2', 'hunter2'],
  [
    'doubly escaped JSON',
    'body={\\\\\\"password\\\\\\":\\\\\\"hunter2\\\\\\"}',
    'hunter2',
  ],
  ['mid-line key = value', 'x password = hunter2', 'hunter2'],
  ['short secret in an unknown shape', 'login with hunter2 failed', 'hunter2'],
  [
    'a short PEM body line sanitized on its own',
    'MIIBOgIBAAJBAKj34',
    'MIIBOgIBAAJBAKj34',
  ],
  [
    'a password piped to a login',
    'echo hunter2 | docker login --password-stdin',
    'hunter2',
  ],
  ['a positional password', 'htpasswd -b .htpasswd bob hunter2', 'hunter2'],
  [
    'a command line as a JSON array',
    '["mysql","-uroot","-phunter2"]',
    'hunter2',
  ],
  ['a compound assignment', "ENV['API_TOKEN'] ||= hunter2", 'hunter2'],
];

describe('sanitizeMessage', () => {
  it.each(redacted)('%s', (_rule, text, expected) => {
    // Act
    const sanitized = sanitizeMessage(text);

    // Assess
    expect(sanitized).toBe(expected);
    expect(sanitizeMessage(sanitized)).toBe(sanitized);
  });

  it.each(survivors)('keeps: %s', (_rule, text) => {
    // Act
    const sanitized = sanitizeMessage(text);

    // Assess
    expect(sanitized).toBe(text);
  });

  it.each(knownGaps)('known gap: %s', (_gap, text, secret) => {
    // Act
    const sanitized = sanitizeMessage(text);

    // Assess
    expect(sanitized).toContain(secret);
  });

  it('holds at least 120 cases of its own', () => {
    // Assess
    expect(
      redacted.length + survivors.length + knownGaps.length,
    ).toBeGreaterThanOrEqual(120);
  });

  it('is what sanitizeMessage and sanitizeLogLines apply', () => {
    // Prepare
    const lines = ['password=a1', 'token: 5', 'x --token t1'];

    // Act
    const sanitized = sanitizeLogLines(lines);

    // Assess
    expect(sanitized).toEqual([`password=${R}`, 'token: 5', `x --token ${R}`]);
    expect(sanitized).toEqual(lines.map(sanitizeMessage));
  });
});

describe('sanitizeMessage on URL-encoded pairs', () => {
  it.each([
    'Authorization: Bearer a1b2c3d4e5f6a7b8c9d0e1f2',
    'Authorization: Basic dXNlcjpwYXNzd29yZA==',
    'api_key=Bearer a1b2c3d4e5f6',
    'password: correct horse battery staple',
    'password=hunter2 user=bob',
    'token: 5',
    'auth: failed for user bob',
    'cookie: none',
    'first_pass: true',
  ])('an encoded pair comes out as its decoded form does: %s', (plain) => {
    // Act
    const sanitized = sanitizeMessage(encodeURIComponent(plain));

    // Assess
    expect(decodeURIComponent(sanitized)).toBe(sanitizeMessage(plain));
  });
});

/** A private key's PEM body lines, as a log prints them: one a line. */
function pemBodyLines(key: KeyObject, type: 'pkcs1' | 'pkcs8' | 'sec1') {
  return key
    .export({ type, format: 'pem' })
    .toString()
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('-----'));
}

describe('sanitizeMessage on PEM body lines, one line at a time', () => {
  it('hides every body line of 48 characters or more of freshly generated keys', () => {
    // Prepare
    const lines: string[] = [];
    for (const modulusLength of [1024, 2048, 2048, 3072]) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength });
      lines.push(...pemBodyLines(privateKey, 'pkcs8'));
      lines.push(...pemBodyLines(privateKey, 'pkcs1'));
    }
    for (const namedCurve of ['prime256v1', 'secp384r1', 'secp521r1']) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve });
      lines.push(...pemBodyLines(privateKey, 'pkcs8'));
      lines.push(...pemBodyLines(privateKey, 'sec1'));
    }
    for (let i = 0; i < 4; i += 1) {
      const { privateKey } = generateKeyPairSync('ed25519');
      lines.push(...pemBodyLines(privateKey, 'pkcs8'));
    }
    // Full lines and long last lines. A random last line of 20–47
    // characters reads as words about once in 6,000 (at 20) to 35,000 (at
    // 24): those lengths are held by the fixed lines below, the same every
    // run, so this test cannot fail on an unlucky key.
    const long = lines.filter((line) => line.length >= 48);

    // Act
    const sanitized = sanitizeLogLines(long);

    // Assess
    expect(long.length).toBeGreaterThan(100);
    expect(long.filter((_line, i) => sanitized[i] !== R)).toEqual([]);
  });

  it('hides base64 lines of every length from 20 to 64 characters', () => {
    // Prepare: 20 lines of each length, the same on every run
    const lines: string[] = [];
    for (let length = 20; length <= 64; length += 1) {
      for (let n = 0; n < 20; n += 1) {
        const bytes = createHash('sha512').update(`line ${length} ${n}`);
        lines.push(bytes.digest('base64').slice(0, length));
      }
    }

    // Act
    const sanitized = sanitizeLogLines(lines);

    // Assess
    expect(lines.filter((_line, i) => sanitized[i] !== R)).toEqual([]);
  });
});

/** Scanner corpus rows where this sanitizer errs toward hiding. */
const CORPUS_OVER_HIDING = new Map([
  ['N16', 'a random-looking public key is caught by the entropy backstop'],
  ['N20', 'a Slack token shape before a #### placeholder is hidden'],
]);

describe('sanitizeMessage on the secret-scanner corpus', () => {
  const corpus = readFileSync(
    new URL('../../fixtures/secrets/scanner-corpus.tsv', import.meta.url),
    'utf8',
  )
    .trim()
    .split('\n')
    .slice(1)
    .map((row) => row.split('\t'));

  it.each(corpus)('%s (should redact: %s)', (id, shouldRedact, line = '') => {
    // Act
    const sanitized = sanitizeMessage(line);

    // Assess
    if (shouldRedact === 'yes' || CORPUS_OVER_HIDING.has(id ?? '')) {
      expect(sanitized).toContain(R);
    } else {
      expect(sanitized).toBe(line);
    }
  });
});

describe('sanitizeAnnotationValue', () => {
  it.each([
    ['a secret key hides the whole value', 'example.com/api-token', 'abc', R],
    ['a password key', 'db-password', 'hunter2 with spaces', R],
    [
      'an ambiguous key keeps a harmless value',
      'example.com/auth',
      'true',
      'true',
    ],
    ['an ambiguous key hides the rest', 'example.com/auth', 'dXNlcjpwYXNz', R],
    [
      'a Helm checksum stays',
      'checksum/secret',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    ],
    [
      'other values are sanitized as text',
      'kubectl.kubernetes.io/last-applied-configuration',
      '{"password":"x","a":1}',
      `{"password":"${R}","a":1}`,
    ],
    ['an ordinary value stays', 'app.kubernetes.io/name', 'api', 'api'],
    ['a look-alike key', 'example.com/token-ttl', '5m', '5m'],
  ])('%s', (_rule, key, value, expected) => {
    // Act
    const sanitized = sanitizeAnnotationValue(key, value);

    // Assess
    expect(sanitized).toBe(expected);
  });
});
