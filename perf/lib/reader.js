'use strict';
// Catch-up reader: one keep-alive HTTP/1.1 connection (undici Client) that reads a
// whole stream from its start to its tail, page after page, exactly as a consumer
// catching up would. The same client reads Svc and the Durable Streams server.
//
//   Svc: GET /<stream>?seq=<n>&count=<c>&bytes=<b>&format=json|raw|binary,
//        resume from Svc-Next-Seq until Svc-Up-To-Date.
//   DS:  GET /v1/stream/<stream>?offset=<o> (o starts at -1),
//        resume from Stream-Next-Offset until Stream-Up-To-Date.
//        (The reference server answers a catch-up read with everything up to the tail.)
//
// Timed passes only count response bytes (and Svc's sequence headers); the untimed
// verification pass before them also parses the payload and checks the record count,
// so client-side parsing does not tax the figures of either server.

const fs = require('node:fs');
const { Client } = require('undici');

async function get(client, path) {
  const res = await client.request({ path, method: 'GET', headersTimeout: 120000, bodyTimeout: 120000 });
  return res;
}

async function drain(body, keep) {
  let n = 0;
  const chunks = keep ? [] : null;
  for await (const chunk of body) {
    n += chunk.length;
    if (keep) chunks.push(chunk);
  }
  return { n, buf: keep ? Buffer.concat(chunks) : null };
}

function header(res, name) {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Records in a verified page body, or throws. */
function countPage(kind, buf, recordSize) {
  if (kind === 'raw') {
    if (buf.length % recordSize !== 0) throw new Error(`raw page of ${buf.length} B is not a multiple of ${recordSize}`);
    return buf.length / recordSize;
  }
  if (kind === 'json') {
    const arr = JSON.parse(buf.toString('utf8'));
    if (!Array.isArray(arr)) throw new Error('JSON page is not an array');
    for (const r of arr) {
      const body = typeof r === 'string' ? r : r.body; // DS JSON stream element, or Svc JSON record
      if (typeof body !== 'string' || body.length !== recordSize) throw new Error('JSON record with unexpected body');
    }
    return arr.length;
  }
  return null; // binary: layout not published; trust Svc-Next-Seq
}

/**
 * Read the whole stream once. Returns {records, wireBytes, requests}.
 * `verify` parses every page and cross-checks counts.
 */
async function readOnce(client, { proto, stream, format, recordSize, expectRecords, pageBytes, verify, capture }) {
  let records = 0;
  let wireBytes = 0;
  let requests = 0;
  if (proto.name === 'svc') {
    let seq = 0;
    const count = Math.max(1, Math.floor(pageBytes / recordSize));
    for (;;) {
      const res = await get(client, `${proto.path(stream)}?seq=${seq}&count=${count}&bytes=${pageBytes}&format=${format}`);
      requests++;
      const { n, buf } = await drain(res.body, verify);
      if (res.statusCode !== 200) throw new Error(`GET seq=${seq} format=${format} → ${res.statusCode} ${buf ? buf.toString().slice(0, 200) : ''}`);
      wireBytes += n;
      const next = Number(header(res, 'svc-next-seq'));
      if (!Number.isFinite(next)) throw new Error(`GET seq=${seq} format=${format}: no Svc-Next-Seq header`);
      if (verify) {
        const c = countPage(format, buf, recordSize);
        if (c !== null && c !== next - seq) throw new Error(`page at seq=${seq} holds ${c} records but Svc-Next-Seq advanced by ${next - seq}`);
      }
      records += next - seq;
      const upToDate = String(header(res, 'svc-up-to-date')).toLowerCase() === 'true';
      if (capture) capture.push({ seq, next, upToDate, body: buf });
      if (upToDate || records >= expectRecords) break;
      if (next <= seq) throw new Error(`read stalled at seq=${seq} (Svc-Next-Seq ${next}, not up to date)`);
      seq = next;
    }
  } else {
    let offset = '-1';
    for (;;) {
      const res = await get(client, `${proto.path(stream)}?offset=${offset}`);
      requests++;
      const { n, buf } = await drain(res.body, verify && format === 'json');
      if (res.statusCode !== 200) throw new Error(`GET offset=${offset} → ${res.statusCode}`);
      if (header(res, 'content-encoding')) throw new Error('response was compressed; the reader must not ask for it');
      wireBytes += n;
      const next = header(res, 'stream-next-offset');
      if (format === 'raw') {
        if (n % recordSize !== 0) throw new Error(`raw page of ${n} B is not a multiple of ${recordSize}`);
        records += n / recordSize;
      }
      else if (verify) records += countPage('json', buf, recordSize);
      const upToDate = String(header(res, 'stream-up-to-date')).toLowerCase() === 'true';
      if (upToDate) break;
      if (!next || next === offset) throw new Error(`read stalled at offset=${offset}`);
      offset = next;
    }
    if (format === 'json' && !verify) records = expectRecords; // verified in the untimed pass
  }
  if (records !== expectRecords) throw new Error(`read ${records} records, expected ${expectRecords}`);
  return { records, wireBytes, requests };
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc; NaN when unreadable. */
function procCpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}
const CLK_TCK = 100; // USER_HZ on Linux

/**
 * One verification pass (untimed), then timed passes until `seconds` have elapsed
 * (at least one). Returns aggregate throughput figures. `capture` (Svc only) receives the pages of
 * the verification pass ({seq, next, upToDate, body}); `serverPid` adds the server's CPU time over
 * the timed passes (all its threads, from /proc).
 */
async function catchUp({ baseUrl, proto, stream, format, recordSize, expectRecords, pageBytes, seconds, maxPasses = 100000, capture, serverPid }) {
  const client = new Client(baseUrl, { keepAliveTimeout: 30000, pipelining: 1 });
  try {
    const check = await readOnce(client, { proto, stream, format, recordSize, expectRecords, pageBytes, verify: true, capture });
    let passes = 0;
    let records = 0;
    let wireBytes = 0;
    let requests = 0;
    const cpu0 = serverPid ? procCpuSeconds(serverPid) : NaN;
    const t0 = process.hrtime.bigint();
    let elapsed = 0;
    while (passes < maxPasses && (passes === 0 || elapsed < seconds)) {
      const r = await readOnce(client, { proto, stream, format, recordSize, expectRecords, pageBytes, verify: false });
      if (proto.name !== 'svc' && format === 'json' && r.wireBytes !== check.wireBytes) {
        throw new Error(`timed pass read ${r.wireBytes} B, verification pass ${check.wireBytes} B`);
      }
      passes++;
      records += r.records;
      wireBytes += r.wireBytes;
      requests += r.requests;
      elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    }
    const serverCpu = (serverPid ? procCpuSeconds(serverPid) : NaN) - cpu0;
    const payloadMB = (records * recordSize) / 1e6;
    return {
      passes,
      seconds: elapsed,
      // Server CPU over the timed passes: cores busy, and CPU µs per MB of payload and per record.
      serverCores: serverCpu / elapsed,
      cpuUsPerMB: (serverCpu * 1e6) / payloadMB,
      cpuNsPerRecord: (serverCpu * 1e9) / records,
      records,
      recordsPerSec: records / elapsed,
      payloadMBps: (records * recordSize) / elapsed / 1e6,
      wireMBps: wireBytes / elapsed / 1e6,
      requestsPerPass: requests / passes,
      passMs: (elapsed / passes) * 1000,
    };
  } finally {
    await client.close();
  }
}

/**
 * One pass over the whole stream, timed, with the server's CPU over it (`serverPid`): the first
 * read of a stream nothing has read yet (a moved stream's records come from the object store).
 */
async function onePass({ baseUrl, proto, stream, format, recordSize, expectRecords, pageBytes, serverPid }) {
  const client = new Client(baseUrl, { keepAliveTimeout: 30000, pipelining: 1 });
  try {
    const cpu0 = serverPid ? procCpuSeconds(serverPid) : NaN;
    const t0 = process.hrtime.bigint();
    const r = await readOnce(client, { proto, stream, format, recordSize, expectRecords, pageBytes, verify: false });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const serverCpu = (serverPid ? procCpuSeconds(serverPid) : NaN) - cpu0;
    const payloadMB = (r.records * recordSize) / 1e6;
    return { passes: 1, seconds, records: r.records, payloadMBps: payloadMB / seconds, cpuUsPerMB: (serverCpu * 1e6) / payloadMB, serverCores: serverCpu / seconds, requestsPerPass: r.requests };
  } finally {
    await client.close();
  }
}

module.exports = { catchUp, onePass };
