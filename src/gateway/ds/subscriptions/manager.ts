/**
 * The subscription state machine: links streams to subscriptions, turns pending work into
 * wakes, hands them to consumers, and fences consumers that lost their lease.
 *
 *   stream changed ──▶ link (pattern / explicit) ──▶ pending work and no wake? ──▶ new wake (generation + 1)
 *                                                                                   │
 *        webhook: signed POST to the receiver ◀─────────────────────────────────────┤
 *          2xx ─▶ lease runs (callbacks heartbeat, ack, done)                        │
 *          2xx {"done": true} ─▶ acks the sent tails, wake ends                      │
 *          failure ─▶ retry with backoff (1 s doubling to 60 s, ±20 %)               │
 *        pull-wake: `{type:"wake", ...}` appended to the wake stream ◀───────────────┘
 *          claim ─▶ holder + token, lease runs; ack / release / lease end ─▶ wake ends
 *
 *   wake ends (done, release, lease expiry) ──▶ still pending? ──▶ next wake at once
 *
 * Every change to a subscription runs under its id in a KeyLock, so the awaits on the host
 * (tails, wake-stream appends) and on the state file never interleave with another change.
 * Stream events are handled synchronously where they can be (link bookkeeping) and queue a
 * wake check only when the subscription has no wake, so an append costs little per
 * subscription.
 */
import { randomBytes } from 'node:crypto';
import { type Logger } from '../../../log';
import { type CallbackTokens } from './callback-token';
import { type Definition, definitionKey, isStreamPath, normalizePath } from './definition';
import { globMatch, literalPrefix } from './glob';
import { KeyLock } from './key-lock';
import { BEFORE_FIRST, hasPending, isOffset, maxOffset, ZERO_OFFSET } from './offsets';
import { refuse, type Refusal } from './replies';
import { type SigningKey } from './signing-key';
import { type StreamInfo, Subscription, type Wake } from './subscription';
import { type SubscriptionHost } from './types';
import { postWebhook } from './webhook-delivery';

const RETRY_BASE_MS = 1_000; // 1 s
const RETRY_MAX_MS = 60_000; // 60 s

/** The answer to a callback or an ack. */
export interface AckResult {
  ok: true;
  next_wake: boolean;
}

/** The answer to a claim. */
export interface ClaimResult {
  wake_id: string;
  generation: number;
  token: string;
  streams: StreamInfo[];
  lease_ttl_ms: number;
}

export interface ManagerOptions {
  host: SubscriptionHost;
  log: Logger;
  now: () => number;
  tokens: CallbackTokens;
  signingKey: SigningKey;
  webhookTimeoutMs: number;
  /** Persist now; resolves when durable. */
  save: () => Promise<void>;
}

export class SubscriptionManager {
  readonly #subs = new Map<string, Subscription>();
  readonly #lock = new KeyLock();
  readonly #o: ManagerOptions;
  /** Background tasks (stream events, timers, deliveries), awaited by close(). */
  readonly #background = new Set<Promise<unknown>>();
  /** Subscriptions with a wake check queued by a stream event and not started yet. */
  readonly #checkQueued = new Set<Subscription>();
  #closed = false;

  constructor(options: ManagerOptions, restored: Subscription[] = []) {
    this.#o = options;
    for (const sub of restored) this.#subs.set(sub.id, sub);
  }

  /** Every subscription, for the state file. */
  list(): Subscription[] {
    return [...this.#subs.values()];
  }

  /** After a restart: wake every subscription with pending work (wakes and leases do not survive one). */
  recover(): void {
    for (const sub of this.#subs.values()) this.#inBackground(sub.id, () => this.#maybeWake(sub, undefined));
  }

  // ── Definitions ────────────────────────────────────────────────────────────────────────

  createOrConfirm(id: string, definition: Definition, baseUrl: string): Promise<{ sub: Subscription; created: boolean } | Refusal> {
    return this.#lock.run(id, async () => {
      const existing = this.#subs.get(id);
      if (existing) {
        if (definitionKey(existing.definition) !== definitionKey(definition)) {
          return refuse('SUBSCRIPTION_ALREADY_EXISTS', 'a subscription with this id and another definition exists');
        }
        return { sub: existing, created: false };
      }
      const sub = new Subscription(id, definition, new Date(this.#o.now()).toISOString(), baseUrl);
      // In the map before the first await: a stream event arriving meanwhile links to it and
      // queues behind this task.
      this.#subs.set(id, sub);
      try {
        for (const path of definition.streams) sub.link(path, 'explicit', (await this.#o.host.tailOffset(path)) ?? ZERO_OFFSET);
        if (definition.pattern !== undefined && this.#o.host.listStreams) {
          for (const path of await this.#o.host.listStreams(literalPrefix(definition.pattern))) {
            if (!isStreamPath(path) || !globMatch(definition.pattern, path) || sub.isWakeStream(path) || sub.links.has(path)) continue;
            sub.link(path, 'glob', (await this.#o.host.tailOffset(path)) ?? ZERO_OFFSET);
          }
        }
      } catch (err) {
        this.#subs.delete(id);
        throw err;
      }
      await this.#o.save();
      return { sub, created: true };
    });
  }

  /** Reads go through the lock too, so they never see a subscription half created. */
  get(id: string): Promise<Subscription | undefined> {
    return this.#lock.run(id, () => Promise.resolve(this.#subs.get(id)));
  }

  remove(id: string): Promise<boolean> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return false;
      this.#endWake(sub, true);
      this.#subs.delete(id);
      await this.#o.save();
      return true;
    });
  }

  addStreams(id: string, paths: string[]): Promise<Refusal | null> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`);
      // A stream linked now starts at its tail: the subscription sees what comes next.
      for (const path of paths) sub.link(path, 'explicit', (await this.#o.host.tailOffset(path)) ?? ZERO_OFFSET);
      await this.#o.save();
      return null;
    });
  }

  removeStream(id: string, path: string): Promise<Refusal | null> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`);
      const pattern = sub.definition.pattern;
      sub.unlinkExplicit(path, pattern !== undefined && globMatch(pattern, path) && !sub.isWakeStream(path));
      sub.wake?.snapshot.delete(path);
      await this.#o.save();
      return null;
    });
  }

  // ── Stream events ──────────────────────────────────────────────────────────────────────

  streamChanged(path: string, tail: string): void {
    if (this.#closed || !isStreamPath(path)) return;
    let linked = false;
    for (const sub of this.#subs.values()) {
      let link = sub.links.get(path);
      if (!link) {
        const pattern = sub.definition.pattern;
        if (pattern === undefined || sub.isWakeStream(path) || !globMatch(pattern, path)) continue;
        link = sub.link(path, 'glob', BEFORE_FIRST);
        linked = true;
      }
      if (isOffset(tail)) link.seenTail = maxOffset(link.seenTail ?? ZERO_OFFSET, tail);
      // A subscription with a wake looks for more work when the wake ends; one queued check
      // covers every event until it runs, since it reads the tails then.
      if (!sub.wake && !this.#checkQueued.has(sub)) {
        this.#checkQueued.add(sub);
        this.#inBackground(sub.id, () => {
          this.#checkQueued.delete(sub);
          return this.#maybeWake(sub, path);
        });
      }
    }
    if (linked) this.#saveSoon();
  }

  streamDeleted(path: string): void {
    if (this.#closed) return;
    let changed = false;
    for (const sub of this.#subs.values()) {
      changed = sub.links.delete(path) || changed;
      sub.wake?.snapshot.delete(path);
    }
    if (changed) this.#saveSoon();
  }

  // ── Consumers ──────────────────────────────────────────────────────────────────────────

  /** A webhook consumer's callback (or a pull-wake worker's ack, `pullOnly`): acks, then heartbeat or done. */
  settle(id: string, token: string, body: unknown, pullOnly: boolean): Promise<AckResult | Refusal> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`);
      if (pullOnly && sub.definition.type !== 'pull-wake') return refuse('INVALID_REQUEST', 'not a pull-wake subscription');
      const wake = this.#fence(sub, token, body);
      if ('error' in wake) return wake;
      const { acks, done } = body as { acks?: unknown; done?: unknown };
      const refused = await this.#applyAcks(sub, acks);
      if (refused) return refused;
      if (done === true) {
        this.#endWake(sub);
        await this.#o.save();
        return { ok: true, next_wake: await this.#wakeIfPending(sub, undefined) };
      }
      // The consumer has the wake, so a delivery retry still scheduled is moot; the lease restarts.
      if (wake.retryTimer) clearTimeout(wake.retryTimer);
      wake.retryTimer = null;
      sub.status = 'active';
      sub.nextAttemptAt = null;
      this.#startLease(sub, wake);
      if (acks !== undefined) await this.#o.save();
      return { ok: true, next_wake: false };
    });
  }

  claim(id: string, worker: string): Promise<ClaimResult | Refusal> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`);
      if (sub.definition.type !== 'pull-wake') return refuse('INVALID_REQUEST', 'not a pull-wake subscription');
      if (sub.wake?.holder) {
        return refuse('ALREADY_CLAIMED', 'another worker holds this subscription', {
          current_holder: sub.wake.holder,
          generation: sub.wake.generation,
        });
      }
      const infos = await this.#infos(sub);
      if (!infos.some((s) => s.has_pending)) return refuse('NO_PENDING_WORK', 'no stream of this subscription has unacknowledged messages');
      const wake = sub.wake ?? (await this.#createWake(sub, undefined, infos));
      wake.holder = worker;
      wake.token = this.#o.tokens.issue(sub.id, wake.generation, this.#o.now());
      this.#startLease(sub, wake);
      return { wake_id: wake.id, generation: wake.generation, token: wake.token, streams: infos, lease_ttl_ms: sub.definition.leaseTtlMs };
    });
  }

  release(id: string, token: string, body: unknown): Promise<Refusal | null> {
    return this.#lock.run(id, async () => {
      const sub = this.#subs.get(id);
      if (!sub) return refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`);
      if (sub.definition.type !== 'pull-wake') return refuse('INVALID_REQUEST', 'not a pull-wake subscription');
      const wake = this.#fence(sub, token, body);
      if ('error' in wake) return wake;
      this.#endWake(sub);
      await this.#wakeIfPending(sub, undefined);
      return null;
    });
  }

  /** Stop every timer and delivery; later events are ignored. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const sub of this.#subs.values()) this.#endWake(sub, true);
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  // ── Wakes ──────────────────────────────────────────────────────────────────────────────

  /** The token must be genuine, and body, token and current wake must agree on wake and generation. */
  #fence(sub: Subscription, token: string, body: unknown): Wake | Refusal {
    const check = this.#o.tokens.check(token, sub.id, this.#o.now());
    if (!check.ok) return refuse(check.code, check.code === 'TOKEN_EXPIRED' ? 'the token has expired' : 'the token is not valid for this subscription');
    const b = (typeof body === 'object' && body !== null ? body : {}) as { wake_id?: unknown; generation?: unknown };
    const wake = sub.wake;
    if (!wake || wake.token === null || check.generation !== wake.generation || b.generation !== wake.generation || b.wake_id !== wake.id) {
      return refuse('FENCED', 'this wake generation is no longer current');
    }
    return wake;
  }

  /** Validate every ack before applying any: a known stream, not backwards, not past the tail. */
  async #applyAcks(sub: Subscription, acks: unknown): Promise<Refusal | null> {
    if (acks === undefined) return null;
    if (!Array.isArray(acks)) return refuse('INVALID_REQUEST', 'acks must be an array of {stream, offset}');
    const accepted: Array<[string, string]> = [];
    for (const ack of acks as Array<{ stream?: unknown; path?: unknown; offset?: unknown }>) {
      const path = normalizePath(typeof ack?.stream === 'string' ? ack.stream : typeof ack?.path === 'string' ? ack.path : '');
      const link = sub.links.get(path);
      if (!link) return refuse('INVALID_OFFSET', `${path || 'an ack'} is not a stream of this subscription`);
      if (!isOffset(ack.offset)) return refuse('INVALID_OFFSET', `the ack offset for ${path} is not an offset`);
      if (ack.offset < link.acked) return refuse('INVALID_OFFSET', `the ack for ${path} goes back before ${link.acked}`);
      if (ack.offset > (await this.#tail(path, link.seenTail))) return refuse('INVALID_OFFSET', `the ack for ${path} is past the stream's tail`);
      accepted.push([path, ack.offset]);
    }
    for (const [path, offset] of accepted) {
      const link = sub.links.get(path);
      if (link) link.acked = maxOffset(link.acked, offset);
    }
    return null;
  }

  async #maybeWake(sub: Subscription, trigger: string | undefined): Promise<void> {
    if (this.#closed || this.#subs.get(sub.id) !== sub || sub.wake) return;
    await this.#wakeIfPending(sub, trigger);
  }

  /** Start the next wake if any stream has unacknowledged messages; whether it did. */
  async #wakeIfPending(sub: Subscription, trigger: string | undefined): Promise<boolean> {
    if (this.#closed) return false;
    const infos = await this.#infos(sub);
    if (!infos.some((s) => s.has_pending)) return false;
    await this.#createWake(sub, trigger, infos);
    return true;
  }

  async #createWake(sub: Subscription, trigger: string | undefined, infos: StreamInfo[]): Promise<Wake> {
    sub.generation++;
    const wake: Wake = {
      id: `w_${randomBytes(12).toString('hex')}`,
      generation: sub.generation,
      token: null,
      holder: null,
      snapshot: new Map(),
      leaseTimer: null,
      retryTimer: null,
      failures: 0,
      inFlight: null,
    };
    sub.wake = wake;
    this.#saveSoon(); // the generation; the random wake id fences even if this write is lost
    const stream = trigger !== undefined && sub.links.has(trigger) ? trigger : (infos.find((s) => s.has_pending)?.path ?? '');
    if (sub.definition.type === 'webhook') {
      wake.token = this.#o.tokens.issue(sub.id, wake.generation, this.#o.now());
      this.#deliver(sub, wake, infos);
    } else {
      const wakeStream = sub.definition.wakeStream!;
      const event = { type: 'wake', subscription_id: sub.id, stream, generation: wake.generation, ts: this.#o.now() };
      try {
        await this.#o.host.appendJson(wakeStream, event);
      } catch (err) {
        // The wake stands: a worker that claims still gets it.
        this.#o.log.warn({ err, subscription: sub.id, wakeStream }, 'could not append a wake event to the wake stream');
      }
    }
    return wake;
  }

  /**
   * End the current wake: no more lease or retries; its token is fenced from now on. A POST in
   * flight is left to finish (a receiver may call back before it answers) and its answer is
   * ignored, unless `abort` (the subscription is going away).
   */
  #endWake(sub: Subscription, abort = false): void {
    const wake = sub.wake;
    if (!wake) return;
    if (wake.leaseTimer) clearTimeout(wake.leaseTimer);
    if (wake.retryTimer) clearTimeout(wake.retryTimer);
    if (abort) wake.inFlight?.abort(new Error('subscription deleted or node closing'));
    sub.wake = null;
    sub.status = 'active';
    sub.nextAttemptAt = null;
  }

  #startLease(sub: Subscription, wake: Wake): void {
    if (wake.leaseTimer) clearTimeout(wake.leaseTimer);
    wake.leaseTimer = setTimeout(() => {
      wake.leaseTimer = null;
      this.#inBackground(sub.id, async () => {
        if (sub.wake !== wake) return;
        this.#o.log.info({ subscription: sub.id, generation: wake.generation, holder: wake.holder }, 'wake lease expired');
        this.#endWake(sub);
        await this.#wakeIfPending(sub, undefined);
      });
    }, sub.definition.leaseTtlMs);
    wake.leaseTimer.unref();
  }

  // ── Webhook delivery ───────────────────────────────────────────────────────────────────

  /** POST the wake (outside the lock: the receiver may call back before it answers), then act on the answer under the lock. */
  #deliver(sub: Subscription, wake: Wake, infos: StreamInfo[]): void {
    const body = JSON.stringify({
      subscription_id: sub.id,
      wake_id: wake.id,
      generation: wake.generation,
      streams: infos,
      callback_url: `${sub.baseUrl}__ds/subscriptions/${encodeURIComponent(sub.id)}/callback`,
      callback_token: wake.token,
    });
    wake.snapshot = new Map(infos.map((s) => [s.path, s.tail_offset]));
    const abort = new AbortController();
    wake.inFlight = abort;
    const signature = this.#o.signingKey.signatureHeader(body, Math.floor(this.#o.now() / 1000));
    const task = postWebhook(sub.definition.webhook!.url, body, signature, this.#o.webhookTimeoutMs, abort).then((outcome) =>
      this.#lock.run(sub.id, async () => {
        if (wake.inFlight === abort) wake.inFlight = null;
        if (sub.wake !== wake || this.#closed) return; // ended meanwhile (callback done, deleted, closing)
        if (!outcome.ok) {
          this.#o.log.warn({ subscription: sub.id, generation: wake.generation, reason: outcome.reason }, 'webhook delivery failed');
          this.#scheduleRetry(sub, wake);
          return;
        }
        wake.failures = 0;
        sub.status = 'active';
        sub.nextAttemptAt = null;
        if (!outcome.done) {
          this.#startLease(sub, wake);
          return;
        }
        // Done at once: everything the wake reported is acknowledged.
        for (const [path, tail] of wake.snapshot) {
          const link = sub.links.get(path);
          if (link) link.acked = maxOffset(link.acked, tail);
        }
        this.#endWake(sub);
        await this.#o.save();
        await this.#wakeIfPending(sub, undefined);
      }),
    );
    this.#track(task);
  }

  #scheduleRetry(sub: Subscription, wake: Wake): void {
    wake.failures++;
    const base = Math.min(RETRY_BASE_MS * 2 ** (wake.failures - 1), RETRY_MAX_MS);
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    sub.status = 'failed';
    sub.nextAttemptAt = this.#o.now() + delay;
    wake.retryTimer = setTimeout(() => {
      wake.retryTimer = null;
      this.#inBackground(sub.id, async () => {
        if (sub.wake !== wake || this.#closed) return;
        this.#deliver(sub, wake, await this.#infos(sub)); // fresh tails: the receiver learns of appends made meanwhile
      });
    }, delay);
    wake.retryTimer.unref();
  }

  // ── Helpers ────────────────────────────────────────────────────────────────────────────

  async #tail(path: string, seen: string | undefined): Promise<string> {
    const tail = await this.#o.host.tailOffset(path);
    if (tail === null) return ZERO_OFFSET;
    return seen === undefined ? tail : maxOffset(tail, seen);
  }

  async #infos(sub: Subscription): Promise<StreamInfo[]> {
    const out: StreamInfo[] = [];
    for (const link of sub.links.values()) {
      const tail = await this.#tail(link.path, link.seenTail);
      out.push({
        path: link.path,
        link_type: link.explicit ? 'explicit' : 'glob',
        acked_offset: link.acked,
        tail_offset: tail,
        has_pending: hasPending(link.acked, tail),
      });
    }
    return out;
  }

  #inBackground(id: string, task: () => Promise<void>): void {
    if (this.#closed) return;
    this.#track(this.#lock.run(id, task));
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.catch((err: unknown) => this.#o.log.error({ err }, 'subscription task failed'));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  #saveSoon(): void {
    this.#o.save().catch(() => undefined); // logged by the writer
  }
}
