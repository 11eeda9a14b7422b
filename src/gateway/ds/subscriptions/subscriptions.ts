/**
 * The front of the `__ds` APIs: turns requests into manager calls and results into responses,
 * owns the keys and the state file. The listener routes every request under
 * `/v1/stream/__ds/` here and reports stream changes; see README.md for what it must do.
 */
import { type Logger } from '../../../log';
import { CallbackTokens } from './callback-token';
import { parseDefinition, parseStreamList } from './definition';
import { SubscriptionManager } from './manager';
import { errorReply, isRefusal, json, methodNotAllowed, noContent, type Refusal, refuse } from './replies';
import { newRequestId, REQUEST_ID_HEADER } from '../../request-log';
import { parseRoute, type Route } from './routes';
import { SigningKey } from './signing-key';
import { loadState, type PersistedState, StateWriter } from './state-file';
import { Subscription } from './subscription';
import { type SubscriptionRequest, type SubscriptionResponse, type SubscriptionsOptions } from './types';

const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000; // 10 s

export class Subscriptions {
  readonly #log: Logger;
  readonly #key: SigningKey;
  readonly #tokens: CallbackTokens;
  readonly #writer: StateWriter | null;
  readonly #manager: SubscriptionManager;
  readonly #allowLoopbackHttp: boolean;
  #recovery: NodeJS.Immediate | null = null;
  #closed = false;

  /** Loads `stateFile` synchronously when given; throws if it exists and is not a state file. */
  constructor(options: SubscriptionsOptions) {
    this.#log = options.log.child({ module: 'ds-subscriptions' });
    this.#allowLoopbackHttp = options.allowLoopbackHttp ?? true;
    const saved = options.stateFile === undefined ? null : loadState(options.stateFile);
    this.#key = saved ? SigningKey.fromJwk(saved.signingKey) : SigningKey.generate();
    this.#tokens = new CallbackTokens(saved ? Buffer.from(saved.tokenKey, 'base64url') : undefined);
    const writer = options.stateFile === undefined ? null : new StateWriter(options.stateFile, () => this.#state(), this.#log);
    this.#writer = writer;
    this.#manager = new SubscriptionManager(
      {
        host: options.host,
        log: this.#log,
        now: options.now ?? Date.now,
        tokens: this.#tokens,
        signingKey: this.#key,
        webhookTimeoutMs: options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
        save: () => (writer ? writer.save() : Promise.resolve()),
      },
      (saved?.subscriptions ?? []).map((s) => Subscription.fromState(s)),
    );
    // New keys are kept at once, so the published JWKS does not change at the next start.
    if (writer && !saved) writer.save().catch(() => undefined);
    // Wakes do not survive a restart: look for pending work once the listener is running.
    if (saved && saved.subscriptions.length > 0) {
      this.#recovery = setImmediate(() => {
        this.#recovery = null;
        this.#manager.recover();
      });
    }
  }

  async handle(req: SubscriptionRequest): Promise<SubscriptionResponse> {
    if (this.#closed) return errorReply(refuse('SHUTTING_DOWN', 'the node is shutting down'));
    try {
      return await this.#route(req, parseRoute(req.subpath));
    } catch (err) {
      // The reply names the id of this line; the gateway's request log keeps it (gateway/request-log.ts).
      const requestId = newRequestId();
      this.#log.error({ err, requestId, method: req.method, subpath: req.subpath }, 'subscription request failed');
      const reply = errorReply(refuse('INTERNAL', `internal error (request id ${requestId})`));
      reply.headers[REQUEST_ID_HEADER] = requestId;
      return reply;
    }
  }

  onStreamChanged(path: string, tailOffset: string): void {
    try {
      this.#manager.streamChanged(path, tailOffset);
    } catch (err) {
      this.#log.error({ err, path }, 'subscription stream event failed');
    }
  }

  onStreamDeleted(path: string): void {
    try {
      this.#manager.streamDeleted(path);
    } catch (err) {
      this.#log.error({ err, path }, 'subscription stream event failed');
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#recovery) clearImmediate(this.#recovery);
    await this.#manager.close();
    await this.#writer?.flush();
  }

  async #route(req: SubscriptionRequest, route: Route): Promise<SubscriptionResponse> {
    const base = req.streamBaseUrl.endsWith('/') ? req.streamBaseUrl : `${req.streamBaseUrl}/`;
    const m = req.method;
    switch (route.kind) {
      case 'jwks':
        if (m !== 'GET' && m !== 'HEAD') return methodNotAllowed(['GET', 'HEAD']);
        return {
          status: 200,
          headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' },
          body: JSON.stringify(this.#key.jwks()),
        };
      case 'unknown':
        return errorReply(refuse('NOT_FOUND', 'no such __ds resource'));
      case 'invalid':
        return errorReply(refuse('INVALID_REQUEST', route.message));
      case 'subscription':
        if (m === 'GET') {
          const sub = await this.#manager.get(route.id);
          return sub ? json(200, this.#describe(sub, base)) : errorReply(refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${route.id}`));
        }
        if (m === 'DELETE') {
          return (await this.#manager.remove(route.id)) ? noContent() : errorReply(refuse('SUBSCRIPTION_NOT_FOUND', `no subscription ${route.id}`));
        }
        if (m !== 'PUT') return methodNotAllowed(['GET', 'PUT', 'DELETE']);
        return this.#put(route.id, req.body, base);
      case 'streams': {
        if (m !== 'POST') return methodNotAllowed(['POST']);
        const body = parseBody(req.body);
        if (!body.ok) return errorReply(body.refusal);
        const list = parseStreamList(body.value.streams, 'streams');
        if (!list.ok) return errorReply(refuse(list.code, list.message));
        if (list.value.length === 0) return errorReply(refuse('INVALID_REQUEST', 'streams must name at least one stream'));
        const refused = await this.#manager.addStreams(route.id, list.value);
        return refused ? errorReply(refused) : noContent();
      }
      case 'stream': {
        if (m !== 'DELETE') return methodNotAllowed(['DELETE']);
        const refused = await this.#manager.removeStream(route.id, route.path);
        return refused ? errorReply(refused) : noContent();
      }
      case 'action':
        if (m !== 'POST') return methodNotAllowed(['POST']);
        return this.#action(route.id, route.action, req);
    }
  }

  async #put(id: string, raw: Buffer, base: string): Promise<SubscriptionResponse> {
    const body = parseBody(raw);
    if (!body.ok) return errorReply(body.refusal);
    const def = parseDefinition(body.value, this.#allowLoopbackHttp);
    if (!def.ok) return errorReply(refuse(def.code, def.message));
    const result = await this.#manager.createOrConfirm(id, def.value, base);
    if (isRefusal(result)) return errorReply(result);
    if (result.created) this.#log.info({ subscription: id, type: def.value.type }, 'subscription created');
    return json(result.created ? 201 : 200, this.#describe(result.sub, base));
  }

  async #action(id: string, action: 'callback' | 'claim' | 'ack' | 'release', req: SubscriptionRequest): Promise<SubscriptionResponse> {
    const parsed = parseBody(req.body);
    if (!parsed.ok) return errorReply(parsed.refusal);
    const body = parsed.value;
    if (action === 'claim') {
      const worker = body.worker;
      if (typeof worker !== 'string' || worker === '') return errorReply(refuse('INVALID_REQUEST', 'worker must be a non-empty string'));
      const result = await this.#manager.claim(id, worker);
      return isRefusal(result) ? errorReply(result) : json(200, result);
    }
    const token = bearer(req.headers.authorization);
    if (token === null) return errorReply(refuse('TOKEN_INVALID', 'Authorization: Bearer <token> is required'));
    if (action === 'release') {
      const refused = await this.#manager.release(id, token, body);
      return refused ? errorReply(refused) : noContent();
    }
    const result = await this.#manager.settle(id, token, body, action === 'ack');
    return isRefusal(result) ? errorReply(result) : json(200, result);
  }

  /** A subscription as GET, PUT and the docs show it. */
  #describe(sub: Subscription, base: string): Record<string, unknown> {
    const d = sub.definition;
    return {
      id: sub.id,
      subscription_id: sub.id,
      type: d.type,
      pattern: d.pattern,
      streams: [...sub.links.values()].map((l) => ({ path: l.path, link_type: l.explicit ? 'explicit' : 'glob', acked_offset: l.acked })),
      webhook: d.webhook && { url: d.webhook.url, signing: { alg: 'ed25519', kid: this.#key.kid, jwks_url: `${base}__ds/jwks.json` } },
      wake_stream: d.wakeStream,
      lease_ttl_ms: d.leaseTtlMs,
      created_at: sub.createdAt,
      status: sub.status,
      next_attempt_at: sub.nextAttemptAt === null ? undefined : new Date(sub.nextAttemptAt).toISOString(),
      description: d.description,
    };
  }

  #state(): PersistedState {
    return {
      version: 1,
      signingKey: this.#key.toJwk(),
      tokenKey: this.#tokens.key.toString('base64url'),
      subscriptions: this.#manager.list().map((s) => s.toState()),
    };
  }
}

type Body = { ok: true; value: Record<string, unknown> } | { ok: false; refusal: Refusal };

/** A JSON object body; an empty body is `{}`. */
function parseBody(raw: Buffer): Body {
  if (raw.length === 0) return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, refusal: refuse('INVALID_REQUEST', 'the body is not valid JSON') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, refusal: refuse('INVALID_REQUEST', 'the body must be a JSON object') };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}
