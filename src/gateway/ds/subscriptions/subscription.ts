/**
 * One subscription in memory: its definition, the streams it is linked to with the offset
 * acknowledged on each, and the wake in progress, if any.
 *
 * A wake is the unit of work handed to a consumer. It has a generation (one more than the
 * previous wake's, persisted) and a random id; callbacks must name both, so a consumer that
 * lost its lease is fenced. At most one wake exists per subscription.
 */
import { type Definition } from './definition';

export type LinkType = 'explicit' | 'glob';

export interface StreamLink {
  readonly path: string;
  /** Named in the definition or by `POST .../streams`. */
  explicit: boolean;
  /** Matched by the pattern. A link is removed when it is neither. */
  glob: boolean;
  /** Everything before this offset is acknowledged (`-1`: nothing yet). */
  acked: string;
  /** The latest tail the listener reported for the stream, if any. */
  seenTail: string | undefined;
}

/** What a wake, a claim and the webhook body report per stream. */
export interface StreamInfo {
  path: string;
  link_type: LinkType;
  acked_offset: string;
  tail_offset: string;
  has_pending: boolean;
}

export interface Wake {
  readonly id: string;
  readonly generation: number;
  /** Webhook: the callback token sent with it. Pull-wake: the claim's token, once claimed. */
  token: string | null;
  /** Pull-wake: the worker holding the claim. */
  holder: string | null;
  /** Webhook: each stream's tail as last sent, auto-acknowledged when the receiver answers `{"done": true}`. */
  snapshot: Map<string, string>;
  leaseTimer: NodeJS.Timeout | null;
  retryTimer: NodeJS.Timeout | null;
  /** Failed deliveries of this wake in a row. */
  failures: number;
  /** Aborts the webhook POST in flight. */
  inFlight: AbortController | null;
}

/** A subscription as the state file keeps it (wakes and leases are not kept: a restart drops them). */
export interface SubscriptionState {
  id: string;
  definition: Definition;
  createdAt: string;
  /** The stream root URL the subscription was created through; webhook callback URLs are built on it. */
  baseUrl: string;
  generation: number;
  streams: Array<{ path: string; explicit: boolean; glob: boolean; acked: string }>;
}

export class Subscription {
  readonly id: string;
  readonly definition: Definition;
  readonly createdAt: string;
  readonly baseUrl: string;
  generation: number;
  readonly links = new Map<string, StreamLink>();
  wake: Wake | null = null;
  /** `failed` while webhook deliveries fail; `nextAttemptAt` is the next retry (ms since epoch). */
  status: 'active' | 'failed' = 'active';
  nextAttemptAt: number | null = null;

  constructor(id: string, definition: Definition, createdAt: string, baseUrl: string, generation = 0) {
    this.id = id;
    this.definition = definition;
    this.createdAt = createdAt;
    this.baseUrl = baseUrl;
    this.generation = generation;
  }

  /** Link `path` as `type`; a stream already linked keeps its acked offset. */
  link(path: string, type: LinkType, acked: string): StreamLink {
    let l = this.links.get(path);
    if (!l) {
      l = { path, explicit: false, glob: false, acked, seenTail: undefined };
      this.links.set(path, l);
    }
    if (type === 'explicit') l.explicit = true;
    else l.glob = true;
    return l;
  }

  /** Drop the explicit link of `path`; the stream stays linked while the pattern matches it. */
  unlinkExplicit(path: string, stillMatches: boolean): void {
    const l = this.links.get(path);
    if (!l) return;
    l.explicit = false;
    l.glob ||= stillMatches;
    if (!l.glob) this.links.delete(path);
  }

  /** The stream the pull-wake events go to never wakes its own subscription (that would loop). */
  isWakeStream(path: string): boolean {
    return this.definition.wakeStream === path;
  }

  toState(): SubscriptionState {
    return {
      id: this.id,
      definition: this.definition,
      createdAt: this.createdAt,
      baseUrl: this.baseUrl,
      generation: this.generation,
      streams: [...this.links.values()].map((l) => ({ path: l.path, explicit: l.explicit, glob: l.glob, acked: l.acked })),
    };
  }

  static fromState(s: SubscriptionState): Subscription {
    const sub = new Subscription(s.id, s.definition, s.createdAt, s.baseUrl, s.generation);
    for (const l of s.streams) sub.links.set(l.path, { path: l.path, explicit: l.explicit, glob: l.glob, acked: l.acked, seenTail: undefined });
    return sub;
  }
}
