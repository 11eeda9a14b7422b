/**
 * A one-line progress display on stderr (only on a TTY): records, bytes, rate, and a bar with
 * a percentage when the input size is known (stdin is a file). Redrawn at most every 100 ms,
 * and only once the work has run 300 ms, so small inputs print nothing extra.
 */
export class Progress {
  #records = 0;
  #bytes = 0;
  #drawn = false;
  #last = 0;
  readonly #start = Date.now();

  constructor(
    private readonly write: (s: string) => void,
    private readonly columns: number,
    private readonly total: number | null,
  ) {}

  add(records: number, bytes: number): void {
    this.#records += records;
    this.#bytes += bytes;
    const now = Date.now();
    if (now - this.#start < 300 || now - this.#last < 100) return;
    this.#last = now;
    this.#draw(now);
  }

  #draw(now: number): void {
    const secs = Math.max((now - this.#start) / 1000, 0.001);
    const rate = `${fmt(this.#records / secs)} rec/s, ${bytesText(this.#bytes / secs)}/s`;
    const counts = `${this.#records.toLocaleString('en-US')} records, ${bytesText(this.#bytes)}`;
    let bar = '';
    if (this.total !== null && this.total > 0) {
      const frac = Math.min(this.#bytes / this.total, 1);
      const width = Math.max(10, Math.min(30, this.columns - 70));
      const full = Math.round(frac * width);
      bar = `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(frac * 100).toFixed(0).padStart(3)}% `;
    }
    const line = `${bar}${counts}  ${rate}`.slice(0, Math.max(this.columns - 1, 20));
    this.write(`\r${line}\x1b[K`);
    this.#drawn = true;
  }

  /** Draws the final state (when anything was drawn) and ends the line. */
  done(): void {
    if (!this.#drawn) return;
    this.#draw(Date.now());
    this.write('\n');
  }
}

function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0);
}

export function bytesText(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n.toFixed(0)} B`;
}
