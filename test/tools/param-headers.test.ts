/**
 * Tool arguments mirrored into `Mcp-Param-*` headers (src/tools/mcp/param-headers.ts, SEP-2243):
 * which `x-mcp-header` declarations are valid, how a value is encoded (plain or the Base64
 * sentinel), and when a request's headers disagree with its arguments. No gateway: the functions alone.
 */
import assert from 'node:assert/strict';
import {
  decodeHeaderValue, encodeHeaderValue, paramHeaderMismatch, paramHeaders, receivedParamHeaders, scanDeclarations, type ParamDeclaration,
} from '../../src/tools/mcp/param-headers';

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'object', properties, ...extra });
const declared = (s: unknown): readonly ParamDeclaration[] => {
  const scan = scanDeclarations(s);
  if (!scan.valid) throw new Error(scan.reason);
  return scan.declarations;
};
const invalid = (s: unknown): string => {
  const scan = scanDeclarations(s);
  assert.equal(scan.valid, false, 'the schema is invalid');
  return scan.valid ? '' : scan.reason;
};

const ROUTE = schema({
  region: { type: 'string', 'x-mcp-header': 'Region' },
  tenant: { type: 'integer', 'x-mcp-header': 'Tenant-Id' },
  dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
  query: { type: 'string' },
  settings: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
});

describe('Mcp-Param headers (SEP-2243)', () => {
  it('finds the declarations, nested ones through properties included', () => {
    assert.deepEqual(declared(ROUTE).map((d) => [d.header, d.path.join('.'), d.type]), [
      ['Region', 'region', 'string'], ['Tenant-Id', 'tenant', 'integer'], ['Dry-Run', 'dryRun', 'boolean'], ['Zone', 'settings.zone', 'string'],
    ]);
    assert.deepEqual(declared(schema({ a: { type: 'string' } })), []);
    assert.deepEqual(declared({ type: 'object', default: { properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }, dependencies: { a: ['b'] } }), [],
      'data outside schema keywords is not a declaration');
  });

  it('scans a schema object once (it is scanned on every call to its tool), and a new object afresh', () => {
    assert.equal(scanDeclarations(ROUTE), scanDeclarations(ROUTE));
    const copy = structuredClone(ROUTE);
    (copy.properties as Record<string, Record<string, unknown>>).query!['x-mcp-header'] = 'Query';
    assert.deepEqual(declared(copy).map((d) => d.header), ['Region', 'Tenant-Id', 'Dry-Run', 'Query', 'Zone']);
    assert.equal(declared(ROUTE).length, 4);
  });

  it('refuses invalid declarations, naming why', () => {
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': '' } })), /not an HTTP token/);
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': 'Bad Name' } })), /not an HTTP token/);
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': 'Bad:Name' } })), /not an HTTP token/);
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': 'Bad\r\nName' } })), /not an HTTP token/);
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': 7 } })), /not an HTTP token/);
    assert.match(invalid(schema({ a: { type: 'number', 'x-mcp-header': 'A' } })), /of type "number": only integer, string and boolean/);
    assert.match(invalid(schema({ a: { type: 'object', 'x-mcp-header': 'A' } })), /of type "object"/);
    assert.match(invalid(schema({ a: { type: ['string', 'null'], 'x-mcp-header': 'A' } })), /only integer, string and boolean/);
    assert.match(invalid(schema({ a: { 'x-mcp-header': 'A' } })), /of type null/);
    assert.match(invalid(schema({ a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'object', properties: { c: { type: 'string', 'x-mcp-header': 'region' } } } })),
      /Region.*declared twice|region.*declared twice/);
    assert.match(invalid({ type: 'object', 'x-mcp-header': 'Root' }), /root/);
    for (const keyword of ['items', 'additionalProperties', 'not', 'if', 'then', 'contains']) {
      assert.match(invalid(schema({ list: { type: 'array', [keyword]: { type: 'string', 'x-mcp-header': 'A' } } })), /does not reach through properties alone/, keyword);
    }
    for (const keyword of ['oneOf', 'anyOf', 'allOf', 'prefixItems']) {
      assert.match(invalid(schema({}, { [keyword]: [schema({ a: { type: 'string', 'x-mcp-header': 'A' } })] })), /does not reach/, keyword);
    }
    for (const keyword of ['$defs', 'definitions', 'patternProperties', 'dependentSchemas']) {
      assert.match(invalid(schema({}, { [keyword]: { x: { type: 'string', 'x-mcp-header': 'A' } } })), /does not reach/, keyword);
    }
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 70; i++) deep = schema({ next: deep });
    assert.match(invalid(deep), /nested more than 64 levels/);
  });

  it('encodes values as the specification\'s table says', () => {
    const cases: [string, string][] = [
      ['us-west1', 'us-west1'], ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='], [' padded ', '=?base64?IHBhZGRlZCA=?='],
      ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='], ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='], ['', '=?base64??='],
      ['inner space', 'inner space'],
    ];
    for (const [value, encoded] of cases) {
      assert.equal(encodeHeaderValue(value), encoded, value);
      assert.equal(decodeHeaderValue(encoded), value, encoded);
    }
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8?='), undefined, 'bad padding');
    assert.equal(decodeHeaderValue('=?base64?SGVs!!!bG8=?='), undefined, 'characters outside the alphabet');
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8='), '=?base64?SGVsbG8=', 'no suffix: literal');
    assert.equal(decodeHeaderValue('=?BASE64?SGVsbG8=?='), '=?BASE64?SGVsbG8=?=', 'the markers are case-sensitive');
  });

  it('mirrors the declared arguments present in a call, and nothing for null, absent or mistyped ones', () => {
    const declarations = declared(ROUTE);
    assert.deepEqual(paramHeaders(declarations, { region: 'Zürich', tenant: 42, dryRun: false, query: 'SELECT 1', settings: { zone: 'b' } }), {
      'mcp-param-region': '=?base64?WsO8cmljaA==?=', 'mcp-param-tenant-id': '42', 'mcp-param-dry-run': 'false', 'mcp-param-zone': 'b',
    });
    assert.deepEqual(paramHeaders(declarations, { region: null, tenant: 1.5, dryRun: 'yes', settings: 'flat' }), {});
    assert.deepEqual(paramHeaders(declarations, { tenant: Number.MAX_SAFE_INTEGER + 1 }), {}, 'an unsafe integer is not mirrored');
    assert.deepEqual(paramHeaders(declared(schema({ toString: { type: 'string', 'x-mcp-header': 'T' } })), {}), {}, 'own properties only');
  });

  it('finds a request\'s headers disagreeing with its arguments', () => {
    const declarations = declared(ROUTE);
    const args = { region: 'us-west1', tenant: 42, query: 'q' };
    const received = (headers: Record<string, string>) => receivedParamHeaders(headers);
    assert.equal(paramHeaderMismatch(declarations, args, received({ 'mcp-param-region': 'us-west1', 'Mcp-Param-Tenant-Id': '42' })), undefined);
    assert.equal(paramHeaderMismatch(declarations, args, received({ 'mcp-param-region': ' us-west1\t', 'mcp-param-tenant-id': '42.0', 'mcp-param-unknown': 'x' })), undefined,
      'spaces around a value, an integer compared as a number, an undeclared header ignored');
    assert.equal(paramHeaderMismatch(declarations, { region: 'Zürich' }, received({ 'mcp-param-region': '=?base64?WsO8cmljaA==?=' })), undefined);
    const cases: [Record<string, unknown>, Record<string, string>, RegExp][] = [
      [args, { 'mcp-param-tenant-id': '42' }, /arguments.region="us-west1" but the required Mcp-Param-Region header is absent/],
      [args, { 'mcp-param-region': 'eu-west1', 'mcp-param-tenant-id': '42' }, /arguments.region="us-west1" but the Mcp-Param-Region header carries "eu-west1"/],
      [args, { 'mcp-param-region': 'us-west1', 'mcp-param-tenant-id': '43' }, /Mcp-Param-Tenant-Id header carries "43"/],
      [args, { 'mcp-param-region': '=?base64?dXMtd2VzdDE?=', 'mcp-param-tenant-id': '42' }, /invalid Base64/],
      [args, { 'mcp-param-region': 'us-west1', 'mcp-param-tenant-id': '42', 'mcp-param-dry-run': 'true' }, /Mcp-Param-Dry-Run header is present but the body carries no boolean/],
      [args, { 'mcp-param-region': 'us-wést1', 'mcp-param-tenant-id': '42' }, /characters a header value may not hold/],
    ];
    for (const [body, headers, message] of cases) assert.match(paramHeaderMismatch(declarations, body, received(headers))?.message ?? '(agreed)', message, JSON.stringify(headers));
  });
});
