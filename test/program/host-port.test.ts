import { formatHostPort, isLoopback, parseHostPort } from '../../src/program';

const ok = (text: string) => {
  const r = parseHostPort(text);
  if (!r.ok) throw new Error(r.error);
  return r.address;
};
const why = (text: string) => {
  const r = parseHostPort(text);
  if (r.ok) throw new Error(`${text} parsed as ${JSON.stringify(r.address)}`);
  return r.error;
};

describe('parseHostPort', () => {
  it('takes a name or an IPv4 address, and an IPv6 address in brackets, with a port from 0 to 65535', () => {
    expect(ok('127.0.0.1:4437')).toEqual({ host: '127.0.0.1', port: 4437 });
    expect(ok('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(ok('broker.example:65535')).toEqual({ host: 'broker.example', port: 65535 });
    expect(ok('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
    expect(ok('[::]:0')).toEqual({ host: '::', port: 0 });
    expect(ok('[fe80::1%eth0]:80')).toEqual({ host: 'fe80::1%eth0', port: 80 });
  });

  it('says what is wrong with text that is not host:port', () => {
    expect(why('nowhere')).toMatch(/^"nowhere" is not host:port .*: the port is missing$/);
    expect(why('host:')).toMatch(/the port is missing$/);
    expect(why('::1:80')).toMatch(/an IPv6 host goes in brackets, as in \[::1\]:9090$/);
    expect(why('[::1]')).toMatch(/a port must follow the bracketed host/);
    expect(why('[::1:80')).toMatch(/the bracket after the IPv6 host is missing/);
    expect(why(':80')).toMatch(/the host is empty$/);
    expect(why('[]:80')).toMatch(/the host is empty$/);
    expect(why('a b:80')).toMatch(/a space, a slash or a bracket$/);
    expect(why('h:http')).toMatch(/the port is not a decimal number$/);
    expect(why('h:-1')).toMatch(/the port is not a decimal number$/);
    expect(why('h:70000')).toMatch(/the port is above 65535$/);
    expect(why('h:123456')).toMatch(/the port is not a decimal number$/);
  });

  it('formats what it parses back to the same text', () => {
    for (const text of ['127.0.0.1:1', '[::1]:2', 'example.com:3']) expect(formatHostPort(ok(text))).toBe(text);
  });
});

describe('isLoopback', () => {
  it('counts 127.0.0.0/8, ::1, IPv4-mapped loopback and localhost, nothing else', () => {
    for (const h of ['127.0.0.1', '127.9.8.7', '::1', '::ffff:127.0.0.1', 'LocalHost']) expect([h, isLoopback(h)]).toEqual([h, true]);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '127.example', 'localhost.example']) expect([h, isLoopback(h)]).toEqual([h, false]);
  });
});
