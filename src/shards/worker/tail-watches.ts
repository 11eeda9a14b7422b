/**
 * The streams of a shard with live readers on the gateway thread (long-poll, SSE), by name, and
 * the tail events reported for them after each applied group (ARCHITECTURE.md, "Live reads").
 * Unwatched streams produce no events at all.
 */
import { type TailEvent } from '../types';
import { type Group } from './group-commit';
import { type StreamState } from './stream-state';

export class TailWatches {
  readonly #watched = new Set<string>();
  /** Orders tail events and watch replies, which reach the gateway by different paths. */
  #version: number;
  readonly #onTail: ((events: TailEvent[]) => void) | undefined;

  /** `versionBase`: a shard reopened by a new thread continues above the old one's versions. */
  constructor(versionBase: number, onTail: ((events: TailEvent[]) => void) | undefined) {
    this.#version = versionBase;
    this.#onTail = onTail;
  }

  get any(): boolean {
    return this.#watched.size > 0;
  }

  /**
   * Start (or stop) watching `name`; returns its durable tail now. Keyed by name: a stream deleted
   * and created again under the name stays watched, and its events carry the new stream id. A
   * missing stream (`s` null or not yet durable) reads as deleted.
   */
  watch(name: string, on: boolean, s: StreamState | null, streamId: number): TailEvent {
    if (on) this.#watched.add(name);
    else this.#watched.delete(name);
    const version = ++this.#version;
    if (s === null || !s.durable) return { name, streamId: -1, nextSeq: 0, closed: false, deleted: true, bytes: 0, version };
    return { name, streamId, nextSeq: s.nextSeq, closed: s.closed, deleted: false, bytes: 0, version };
  }

  /** One tail event per watched stream the applied group touched (appends, seal, trim, delete). */
  emit(g: Group, streamIdOf: (s: StreamState) => number): void {
    const events: TailEvent[] = [];
    for (const [s, frames] of g.frames) {
      // An import's staging stream is not the name's stream until published (stream-import.ts).
      if (!this.#watched.has(s.meta.name) || s.meta.importing) continue;
      let bytes = 0;
      for (const f of frames) bytes += f.buf.length;
      events.push({ name: s.meta.name, streamId: streamIdOf(s), nextSeq: s.nextSeq, closed: s.closed, deleted: s.deleted, bytes, version: ++this.#version });
    }
    if (events.length > 0) this.#onTail?.(events);
  }
}
