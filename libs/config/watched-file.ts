// A configuration file the process re-reads when it changes (users, tenant tokens, billing tenants), so
// granting or revoking access needs no restart. Checked on use, at most every `checkMs`: a stat, and a
// read and parse only when modification time, size or inode moved. A version that cannot be read or
// parsed keeps the last good value and is reported; the first read throws, so a bad file stops the start.
import { readFileSync, statSync } from "node:fs";

export interface WatchedFileOptions<T> {
  /** Minimum time between two checks (default 2 s); 0 checks on every use. */
  checkMs?: number;
  onReload?: (value: T) => void;
  onError?: (err: Error) => void;
}

export class WatchedFile<T> {
  private value: T;
  private stamp: string;
  private checkedAt = 0;

  constructor(
    readonly path: string,
    private readonly parse: (text: string) => T,
    private readonly options: WatchedFileOptions<T> = {},
  ) {
    this.stamp = this.currentStamp();
    this.value = parse(readFileSync(path, "utf8"));
  }

  /** The file's value as of its last good version. */
  current(): T {
    this.refresh();
    return this.value;
  }

  private currentStamp(): string {
    const s = statSync(this.path);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  }

  private refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < (this.options.checkMs ?? 2_000)) return;
    this.checkedAt = now;
    try {
      const stamp = this.currentStamp();
      if (stamp === this.stamp) return;
      const next = this.parse(readFileSync(this.path, "utf8"));
      this.value = next;
      this.stamp = stamp;
      this.options.onReload?.(next);
    } catch (err) {
      this.options.onError?.(err as Error);
    }
  }
}
