import net from 'node:net';
import test from 'ava';
import {
  type AddressClass,
  checkWebhookUrl,
  classifyAddress,
  type Lookup,
  type LookupAddress,
  type RefusalReason,
  resolveTarget,
  TargetRefusedError,
} from '../lib/net/ssrf.ts';

// No test here may open a connection: resolvers are stubs, and a tripwire on
// net.Socket#connect (which tls and http use too) records and refuses any
// attempt in this process. Every test ends by checking it never fired.
const connectAttempts: unknown[][] = [];
const realConnect = net.Socket.prototype.connect;
test.before(() => {
  net.Socket.prototype.connect = function tripwire(...args: unknown[]) {
    connectAttempts.push(args);
    throw new Error('ssrf tests must not open connections');
  } as typeof realConnect;
});
test.after.always(() => {
  net.Socket.prototype.connect = realConnect;
});
test.afterEach.always((t) => {
  t.deepEqual(connectAttempts, [], 'a connection was attempted');
});

const table: Record<AddressClass, string[]> = {
  public: [
    '8.8.8.8',
    '1.1.1.1',
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '203.0.114.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4007:80e::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ],
  loopback: [
    '127.0.0.0',
    '127.0.0.1',
    '127.255.255.255',
    '::1',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '64:ff9b::127.0.0.1',
    '2002:7f00:1::',
  ],
  private: [
    '10.0.0.0',
    '10.255.255.255',
    '172.16.0.0',
    '172.31.255.255',
    '192.168.0.0',
    '192.168.255.255',
    '100.64.0.0',
    '100.127.255.255',
    '::ffff:10.0.0.1',
    '::ffff:a00:1',
    '::FFFF:192.168.1.1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
    'fc00::',
    'fc00::1',
    'fd12:3456:789a::1',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fec0::1',
    '64:ff9b:1::a00:1',
  ],
  link_local: [
    '169.254.0.0',
    '169.254.0.1',
    '169.254.169.253',
    '169.254.169.255',
    '169.254.255.255',
    'fe80::1',
    'fe80::1%eth0',
    'febf:ffff::1',
    '::ffff:169.254.1.1',
  ],
  metadata: [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.170.23',
    '100.100.100.200',
    'fd00:ec2::254',
    'fd00:ec2:0:0:0:0:0:254',
    'fd00:ec2::23',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '2002:a9fe:a9fe::',
  ],
  multicast: ['224.0.0.0', '224.0.0.1', '239.255.255.255', 'ff00::', 'ff02::1', 'ffff::1', '::ffff:224.0.0.1'],
  unspecified: ['0.0.0.0', '0.0.0.1', '0.255.255.255', '::', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0'],
  reserved: [
    '240.0.0.0',
    '250.1.2.3',
    '255.255.255.254',
    '255.255.255.255',
    '192.0.0.0',
    '192.0.0.255',
    '192.0.2.0',
    '192.0.2.255',
    '198.18.0.0',
    '198.19.255.255',
    '198.51.100.0',
    '198.51.100.255',
    '203.0.113.0',
    '203.0.113.255',
    '2001:db8::1',
    '3fff::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '::7f00:1',
    '::2',
    '100::1',
    '4000::1',
    'fe00::1',
  ],
};

for (const [expected, addresses] of Object.entries(table)) {
  test(`classifyAddress: ${expected}`, (t) => {
    for (const address of addresses) t.is(classifyAddress(address), expected as AddressClass, address);
  });
}

test('classifyAddress refuses what is not an IP address', (t) => {
  for (const value of ['', 'example.com', '256.0.0.1', '10.0.0.1/8', '[::1]', '1.2.3', ':::1']) {
    t.throws(() => classifyAddress(value), { instanceOf: TypeError }, value);
  }
});

function refusedUrl(t: import('ava').ExecutionContext, url: string, reason: RefusalReason, allowPrivate = false) {
  const check = checkWebhookUrl(url, { allowPrivate });
  t.false(check.ok, url);
  if (!check.ok) t.is(check.reason, reason, url);
}

test('checkWebhookUrl accepts public https URLs, any port', (t) => {
  for (const url of [
    'https://example.com/hooks/valise',
    'https://example.com:8443/x?y=1#fragment',
    'https://8.8.8.8/',
    'https://[2606:4700:4700::1111]:443/hook',
    'https://Bücher.example/',
  ]) {
    const check = checkWebhookUrl(url, { allowPrivate: false });
    t.true(check.ok, url);
  }
});

test('checkWebhookUrl refuses what does not parse, and port 0', (t) => {
  for (const url of ['', 'not a url', '/relative/path', 'https://', 'https://exa mple.com/', 'https://[::1/'])
    refusedUrl(t, url, 'invalid_url');
  refusedUrl(t, 'https://example.com:0/', 'invalid_url');
});

test('checkWebhookUrl refuses other schemes, and plain http', (t) => {
  for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'ws://example.com/']) {
    refusedUrl(t, url, 'unsupported_scheme');
  }
  refusedUrl(t, 'javascript:alert(1)', 'unsupported_scheme');
  refusedUrl(t, 'data:application/json,{}', 'unsupported_scheme');
  refusedUrl(t, 'http://example.com/', 'https_required');
  refusedUrl(t, 'http://example.com/', 'https_required', true);
  refusedUrl(t, 'http://8.8.8.8/', 'https_required', true);
});

test('checkWebhookUrl refuses credentials in the URL', (t) => {
  for (const url of ['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/']) {
    refusedUrl(t, url, 'credentials_in_url');
    refusedUrl(t, url, 'credentials_in_url', true);
  }
});

test('checkWebhookUrl refuses non-public literal IPs, in every spelling the URL parser accepts', (t) => {
  for (const url of [
    'https://10.0.0.1/',
    'https://192.168.1.1:8443/',
    'https://172.16.0.1/',
    'https://100.64.0.1/',
    'https://127.0.0.1/',
    'https://127.1/',
    'https://0x7f.0.0.1/',
    'https://2130706433/',
    'https://017700000001/',
    'https://127.0.0.1./',
    'https://0/',
    'https://0.0.0.0/',
    'https://[::1]/',
    'https://[::]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[64:ff9b::a00:1]/',
    'https://224.0.0.1/',
    'https://192.0.2.10/',
    'https://255.255.255.255/',
    'https://localhost/',
    'https://LOCALHOST./',
    'https://api.localhost:8443/',
  ]) {
    refusedUrl(t, url, 'address_not_public');
  }
});

test('checkWebhookUrl refuses metadata endpoints, whatever the scheme', (t) => {
  for (const url of [
    'https://169.254.169.254/latest/meta-data/',
    'http://169.254.169.254/computeMetadata/v1/',
    'https://[fd00:ec2::254]/',
    'https://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'https://0xa9.0xfe.0xa9.0xfe/',
    'https://2852039166/',
  ]) {
    refusedUrl(t, url, 'metadata_address');
    refusedUrl(t, url, 'metadata_address', true);
  }
});

test('allowPrivate allows loopback over http and private targets over https, but never metadata', (t) => {
  for (const url of [
    'http://127.0.0.1:3000/hook',
    'http://localhost:3000/hook',
    'http://[::1]:3000/hook',
    'https://10.0.0.1/',
    'https://[fd00::1]/',
    'https://169.254.1.1/',
    'https://receiver.internal/',
  ]) {
    t.true(checkWebhookUrl(url, { allowPrivate: true }).ok, url);
  }
  refusedUrl(t, 'http://10.0.0.1/', 'https_required', true);
  refusedUrl(t, 'http://receiver.internal/', 'https_required', true);
  refusedUrl(t, 'https://169.254.169.254/', 'metadata_address', true);
  refusedUrl(t, 'http://[fd00:ec2::254]/', 'metadata_address', true);
  // Never a receiver, setting or not.
  refusedUrl(t, 'https://0.0.0.0/', 'address_not_public', true);
  refusedUrl(t, 'https://224.0.0.1/', 'address_not_public', true);
  refusedUrl(t, 'https://192.0.2.1/', 'address_not_public', true);
});

// resolveTarget with a stub resolver that records its calls.

function stub(answer: readonly LookupAddress[] | Error) {
  const calls: Array<[string, { all: true }]> = [];
  const lookup: Lookup = async (hostname, options) => {
    calls.push([hostname, options]);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { lookup, calls };
}

const v4 = (address: string) => ({ address, family: 4 });
const v6 = (address: string) => ({ address, family: 6 });

async function refusedTarget(
  t: import('ava').ExecutionContext,
  url: string,
  answer: readonly LookupAddress[] | Error,
  reason: RefusalReason,
  allowPrivate = false,
) {
  const { lookup, calls } = stub(answer);
  const error = await t.throwsAsync(resolveTarget(url, { allowPrivate, lookup }), { instanceOf: TargetRefusedError });
  t.is(error?.reason, reason, url);
  return { error, calls };
}

test('a name resolving to a private address is refused, and the stub resolver was the only thing called', async (t) => {
  const { error, calls } = await refusedTarget(
    t,
    'https://hooks.example.com/x',
    [v4('10.0.0.5')],
    'address_not_public',
  );
  t.deepEqual(calls, [['hooks.example.com', { all: true }]]);
  t.is(error?.address, '10.0.0.5');
  t.is(error?.addressClass, 'private');
});

test('one bad address among several refuses the target, whatever the order', async (t) => {
  for (const answer of [
    [v4('93.184.216.34'), v4('192.168.0.10')],
    [v4('192.168.0.10'), v4('93.184.216.34')],
    [v6('2606:2800:220:1::1'), v6('::ffff:127.0.0.1')],
    [v4('93.184.216.34'), v6('fe80::1')],
  ]) {
    const { calls } = await refusedTarget(t, 'https://hooks.example.com/', answer, 'address_not_public');
    t.is(calls.length, 1);
  }
});

test('a name resolving to a metadata address is refused, even with allowPrivate', async (t) => {
  for (const allowPrivate of [false, true]) {
    await refusedTarget(t, 'https://metadata.example/', [v4('169.254.169.254')], 'metadata_address', allowPrivate);
    await refusedTarget(t, 'https://metadata.example/', [v6('fd00:ec2::254')], 'metadata_address', allowPrivate);
    await refusedTarget(
      t,
      'https://metadata.example/',
      [v4('10.0.0.1'), v4('169.254.169.254')],
      'metadata_address',
      allowPrivate,
    );
  }
});

test('a public name resolves to the address to connect to, resolved once', async (t) => {
  const { lookup, calls } = stub([v4('93.184.216.34'), v6('2606:2800:220:1::1')]);
  const target = await resolveTarget('https://Hooks.Example.com:8443/valise?x=1', { allowPrivate: false, lookup });
  t.deepEqual(calls, [['hooks.example.com', { all: true }]]);
  t.is(target.hostname, 'hooks.example.com');
  t.is(target.address, '93.184.216.34');
  t.is(target.family, 4);
  t.is(target.port, 8443);
  t.is(target.addressClass, 'public');
  t.is(target.url.pathname, '/valise');

  const six = await resolveTarget('https://six.example/', {
    allowPrivate: false,
    lookup: stub([v6('2a00::1')]).lookup,
  });
  t.like(six, { address: '2a00::1', family: 6, port: 443 });
});

test('literal IP targets are not resolved; refused URLs never reach the resolver', async (t) => {
  const { lookup, calls } = stub([v4('10.0.0.1')]);
  const literal = await resolveTarget('https://[2606:4700:4700::1111]/', { allowPrivate: false, lookup });
  t.like(literal, { hostname: '2606:4700:4700::1111', address: '2606:4700:4700::1111', family: 6 });
  for (const url of ['http://example.com/', 'https://u:p@example.com/', 'https://10.0.0.1/', 'ftp://example.com/']) {
    await t.throwsAsync(resolveTarget(url, { allowPrivate: false, lookup }), { instanceOf: TargetRefusedError });
  }
  t.deepEqual(calls, []);
});

test('resolution failures are refusals with their own reason', async (t) => {
  const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
  const { error } = await refusedTarget(t, 'https://nowhere.example/', notFound, 'resolution_failed');
  t.is(error?.cause, notFound);
  await refusedTarget(t, 'https://empty.example/', [], 'resolution_failed');
  await refusedTarget(t, 'https://odd.example/', [v4('not-an-ip')], 'resolution_failed');
});

test('allowPrivate: loopback over http resolves, but a loopback name must only resolve to loopback', async (t) => {
  const { lookup } = stub([v4('127.0.0.1'), v6('::1')]);
  const target = await resolveTarget('http://localhost:8080/hook', { allowPrivate: true, lookup });
  t.like(target, { hostname: 'localhost', address: '127.0.0.1', port: 8080, addressClass: 'loopback' });
  t.like(await resolveTarget('http://127.0.0.1:9000/', { allowPrivate: true, lookup }), { port: 9000 });
  await refusedTarget(t, 'http://localhost:8080/', [v4('10.0.0.1')], 'https_required', true);
  const internal = await resolveTarget('https://receiver.internal/', {
    allowPrivate: true,
    lookup: stub([v4('10.1.2.3')]).lookup,
  });
  t.like(internal, { address: '10.1.2.3', addressClass: 'private' });
  // Without the setting, the same targets are refused.
  await refusedTarget(t, 'https://receiver.internal/', [v4('10.1.2.3')], 'address_not_public');
  await refusedTarget(t, 'http://localhost:8080/', [v4('127.0.0.1')], 'address_not_public');
});

test('checkWebhookUrl refuses the metadata service by its own names, without resolving them', (t) => {
  for (const url of [
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://METADATA.Google.Internal./',
    'http://metadata.google.internal/',
    'https://metadata.goog/',
    'https://instance-data/latest/meta-data/',
    'https://instance-data.ec2.internal/',
  ]) {
    refusedUrl(t, url, 'metadata_address');
    refusedUrl(t, url, 'metadata_address', true);
  }
  t.true(checkWebhookUrl('https://metadata.google.internal.example.com/', { allowPrivate: false }).ok);
});
