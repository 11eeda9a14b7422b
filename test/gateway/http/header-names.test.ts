/**
 * Header names that are also property names of plain objects reach handlers as plain headers on
 * both engines: the request's header record inherits nothing (the uWS engine builds it on an
 * empty, frozen prototype so that it stays a fast object; node's has no prototype).
 */
import { loadHttpEngine, type HttpServerHandle } from '../../../src/gateway/http';
import { rawRequest } from '../../helpers/raw-http';

describe.each(['uws', 'node'] as const)('request header names on the %s engine', (engineName) => {
  let server: HttpServerHandle | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  // (A header name with `_` gets no answer at all from this uWS build, so `__proto__` is only looked up, not sent.)
  it('treats constructor, toString, valueOf and hasOwnProperty as ordinary headers, and inherits none of them, __proto__ included', async () => {
    const engine = await loadHttpEngine(engineName, { warn: () => {} });
    server = await engine.listen(
      { host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge: () => ({ status: 413, headers: [], body: '' }) },
      (req, res) => {
        const h = req.headers;
        const seen = {
          keys: Object.keys(h).sort(),
          proto: typeof h['__proto__'],
          ctor: h['constructor'],
          toString: h['tostring'],
          inheritedToString: typeof (h as Record<string, unknown>)['toString'],
          hasOwn: h['hasownproperty'],
          valueOf: h['valueof'],
          inheritedHasOwn: typeof (h as Record<string, unknown>)['hasOwnProperty'],
          forIn: [] as string[],
        };
        for (const k in h) seen.forIn.push(k);
        seen.forIn.sort();
        res.send(200, [['content-type', 'application/json']], JSON.stringify(seen));
      },
    );
    const r = await rawRequest(
      server.port,
      'GET /x HTTP/1.1\r\nHost: h\r\nconstructor: c\r\ntoString: t\r\nvalueOf: v\r\nhasOwnProperty: o\r\nConnection: close\r\n\r\n',
    );
    const body = JSON.parse(r.body.toString()) as Record<string, unknown>;
    expect(body).toEqual({
      keys: ['connection', 'constructor', 'hasownproperty', 'host', 'tostring', 'valueof'],
      proto: 'undefined',
      ctor: 'c',
      toString: 't',
      inheritedToString: 'undefined',
      hasOwn: 'o',
      valueOf: 'v',
      inheritedHasOwn: 'undefined',
      forIn: ['connection', 'constructor', 'hasownproperty', 'host', 'tostring', 'valueof'],
    });
  });
});
