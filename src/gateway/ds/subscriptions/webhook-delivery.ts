/**
 * One webhook POST: the signed wake body to the subscriber's URL, with a time limit. The
 * receiver acknowledges by answering 2xx; a JSON answer `{"done": true}` also says it finished
 * the whole wake synchronously. Anything else (non-2xx, network error, timeout) is a failed
 * delivery, retried by the caller.
 */

export type DeliveryOutcome = { ok: true; done: boolean } | { ok: false; reason: string };

/** Bytes of a receiver's answer read at most: `{"done": true}` is all we look for. */
const MAX_ANSWER_BYTES = 64 * 1024; // 64 KiB

export async function postWebhook(
  url: string,
  body: string,
  signature: string,
  timeoutMs: number,
  abort: AbortController,
): Promise<DeliveryOutcome> {
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-signature': signature },
      body,
      signal: abort.signal,
      redirect: 'manual', // a redirect could lead anywhere the URL check would refuse
    });
    const answer = await readAnswer(res);
    if (res.status < 200 || res.status > 299) return { ok: false, reason: `receiver answered ${res.status}` };
    return { ok: true, done: isDone(answer) };
  } catch (err) {
    const reason = abort.signal.aborted ? String(abort.signal.reason ?? 'aborted') : String(err);
    return { ok: false, reason };
  } finally {
    clearTimeout(timer);
  }
}

async function readAnswer(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const bytes = Buffer.from(chunk as Uint8Array);
    chunks.push(bytes);
    size += bytes.length;
    if (size > MAX_ANSWER_BYTES) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isDone(answer: string): boolean {
  try {
    const parsed = JSON.parse(answer) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as { done?: unknown }).done === true;
  } catch {
    return false;
  }
}
