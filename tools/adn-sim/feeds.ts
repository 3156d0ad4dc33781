// The simulator's append-only NSU logs, one per (municipality, tipoNSU), generated lazily from the seed.
import type { FeedEntry } from "./model.js";
import { FeedGenerator } from "./generate.js";

export interface FeedLog {
  readonly ibge: string;
  readonly tipoNsu: string;
  /** Entries in NSU order (true holes are absent; hidden entries are present with `hidden`). */
  readonly entries: FeedEntry[];
  /** NSUs that hold no document at all (`lote=false` answers 404 E2040). */
  readonly holes: ReadonlySet<bigint>;
  /** Generates and appends `count` new entries, as documents reaching the ADN while a sync runs. */
  append(count: number): FeedEntry[];
  at(nsu: bigint): FeedEntry | undefined;
  /** Index of the first entry with NSU ≥ `nsu` (binary search: feeds for benchmarks are large). */
  firstIndexFrom(nsu: bigint): number;
  lastNsu(): bigint;
  /**
   * Drops the entries with NSU ≤ `nsu` from memory, as the ADN past its retention: a `lote=true` request
   * from below them answers from the first entry kept, a `lote=false` one 404. For benchmarks whose feeds
   * hold millions of generated entries once synced (bench:fleet); returns how many were dropped.
   */
  forgetThrough(nsu: bigint): number;
}

export class Feeds {
  private readonly logs = new Map<string, FeedLog>();

  constructor(private readonly opts: { seed: number; initialSize: number; tpAmb: () => 1 | 2 }) {}

  get(ibge: string, tipoNsu: string): FeedLog {
    const key = `${ibge}/${tipoNsu}`;
    let log = this.logs.get(key);
    if (!log) {
      log = createLog(
        new FeedGenerator({ seed: this.opts.seed, ibge, tipoNsu, tpAmb: this.opts.tpAmb() }),
        ibge,
        tipoNsu,
        this.opts.initialSize,
      );
      this.logs.set(key, log);
    }
    return log;
  }

  /** Every generated log (for chave lookups). */
  all(): FeedLog[] {
    return [...this.logs.values()];
  }
}

function createLog(gen: FeedGenerator, ibge: string, tipoNsu: string, initialSize: number): FeedLog {
  const entries: FeedEntry[] = [];
  const index = new Map<bigint, FeedEntry>();
  const append = (count: number) => {
    const added = gen.next(count);
    for (const e of added) {
      entries.push(e);
      index.set(e.nsu, e);
    }
    return added;
  };
  const firstIndexFrom = (nsu: bigint) => {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (entries[mid]!.nsu < nsu) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  append(initialSize);
  return {
    ibge,
    tipoNsu,
    entries,
    holes: gen.holes,
    append,
    at: (nsu) => index.get(nsu),
    firstIndexFrom,
    lastNsu: () => entries.at(-1)?.nsu ?? 0n,
    forgetThrough(nsu) {
      const dropped = firstIndexFrom(nsu + 1n);
      for (const e of entries.splice(0, dropped)) index.delete(e.nsu);
      return dropped;
    },
  };
}
