// BeginRun for many feeds in one transaction (docs/decisions/0036-batched-run-begin-and-finish.md): the
// checks of 0008 per feed, on the state rows read under lock in one statement, and the writes of every
// admitted feed in one multi-row statement each. One refused feed writes nothing and is answered on its
// own; the single-feed BeginRun is this with one entry.
import type { ConnectError } from "@connectrpc/connect";
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Run } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { inTransaction } from "../../../libs/db/tx.js";
import { feedLabel, RUNNING, type Feed } from "../codes.js";
import { feedDisabled, notEligible, staleFence } from "../errors.js";
import { municipalityTables } from "../ibge.js";
import { big, runFromRow } from "../mapping/records.js";
import type { Row, StoreDb } from "./context.js";
import { feedKey, feedsWhere, loadStates, rowFeedKey, valuesTable } from "./feed-rows.js";
import { FEED_WHERE, feedParams } from "./state.js";

export interface BeginRunInput {
  feed: Feed;
  holder: string;
  fence: bigint;
  trigger: string;
  pool: string | null;
}

export interface BeginRunResult {
  run: Run;
  cursor: bigint;
  nextEligibleAt: Date | null;
  cooldownUntil: Date | null;
  /** The feed's short_page_ends when the run began (0061). */
  shortPageEnds: number;
}

/** One entry's answer in a batched call: its value, or the error the single-entry call would throw. */
export type EntryOutcome<T> = { ok: true; value: T } | { ok: false; error: ConnectError };

const after = (d: unknown, now: Date): d is Date => d instanceof Date && d.getTime() > now.getTime();
const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);

/** Highest NSU persisted in any table (documents, events, aliases, quarantine) of each feed, in one statement. */
async function maxPersistedNsus(conn: PoolConnection, feeds: readonly Feed[]): Promise<bigint[]> {
  if (feeds.length === 0) return [];
  const parts: string[] = [];
  const params: unknown[] = [];
  feeds.forEach((feed, i) => {
    const t = municipalityTables(feed.ibge);
    parts.push(
      `SELECT ${i} AS i, (SELECT MAX(nsu) FROM ${t.documentos} WHERE ambiente = ? AND tipo_nsu = ?) AS d,
              (SELECT MAX(nsu) FROM ${t.eventos} WHERE ambiente = ? AND tipo_nsu = ?) AS e,
              (SELECT MAX(nsu) FROM nfse_nsu_aliases WHERE ${FEED_WHERE}) AS a,
              (SELECT MAX(nsu) FROM nfse_quarantine WHERE ${FEED_WHERE}) AS q`,
    );
    params.push(feed.ambiente, feed.tipoNsu, feed.ambiente, feed.tipoNsu, ...feedParams(feed), ...feedParams(feed));
  });
  const [rows] = await conn.query<RowDataPacket[]>(parts.join(" UNION ALL "), params);
  const out = feeds.map(() => 0n);
  for (const r of rows) out[Number(r.i)] = [r.d, r.e, r.a, r.q].map(big).reduce(maxBig, 0n);
  return out;
}

interface Admitted {
  index: number;
  input: BeginRunInput;
  state: Row;
  cursor: bigint;
}

/** Begins the runs of many feeds (no feed twice) in one transaction; one outcome per input, in order. */
export async function beginRuns(db: StoreDb, inputs: readonly BeginRunInput[]): Promise<EntryOutcome<BeginRunResult>[]> {
  if (inputs.length === 0) return [];
  return inTransaction(db.pool, async (conn) => {
    const out: EntryOutcome<BeginRunResult>[] = new Array(inputs.length);
    const states = await loadStates(
      conn,
      inputs.map((i) => i.feed),
      true,
    );
    const response = (state: Row, run: Row, cursor: bigint): BeginRunResult => ({
      run: runFromRow(run),
      cursor,
      nextEligibleAt: (state.next_eligible_at as Date | null) ?? null,
      cooldownUntil: (state.cooldown_until as Date | null) ?? null,
      shortPageEnds: Number(state.short_page_ends),
    });

    // The checks of BeginRun, in its order, per feed.
    const retries: { index: number; state: Row }[] = [];
    const candidates: { index: number; state: Row }[] = [];
    inputs.forEach((input, index) => {
      const state = states.get(feedKey(input.feed))!;
      if (state instanceof Error) {
        out[index] = { ok: false, error: state as ConnectError };
        return;
      }
      const stored = big(state.fence_token);
      const storedHolder = String(state.fence_holder ?? "");
      const { fence, holder } = input;
      if (fence < stored || (fence === stored && storedHolder !== holder)) {
        out[index] = { ok: false, error: staleFence(feedLabel(input.feed), fence, stored, storedHolder) };
        return;
      }
      if (fence === stored && state.status === "running" && state.current_run_id !== null) retries.push({ index, state });
      else candidates.push({ index, state });
    });

    // Retrying with the same holder and fence returns the run already begun (idempotent).
    if (retries.length > 0) {
      const [runs] = await conn.query<RowDataPacket[]>("SELECT * FROM nfse_sync_runs WHERE id IN (?)", [
        retries.map((r) => String(r.state.current_run_id)),
      ]);
      const byId = new Map(runs.map((r) => [String(r.id), r]));
      for (const r of retries) {
        const current = byId.get(String(r.state.current_run_id));
        if (current && current.outcome === RUNNING && current.holder === inputs[r.index]!.holder) {
          out[r.index] = { ok: true, value: response(r.state, current, big(current.from_nsu)) };
        } else candidates.push(r);
      }
    }

    const admitted: Admitted[] = [];
    for (const { index, state } of candidates) {
      const input = inputs[index]!;
      const label = feedLabel(input.feed);
      const now = state.db_now as Date;
      if (Number(state.enabled) !== 1) out[index] = { ok: false, error: feedDisabled(label, "the feed is disabled") };
      else if (Number(state.municipality_active) !== 1)
        out[index] = { ok: false, error: feedDisabled(label, "the municipality is inactive") };
      else {
        const cooling = after(state.cooldown_until, now);
        const waiting = input.trigger !== "reconciliation" && after(state.next_eligible_at, now);
        if (cooling || waiting) {
          out[index] = {
            ok: false,
            error: notEligible(
              label,
              waiting ? (state.next_eligible_at as Date) : undefined,
              cooling ? (state.cooldown_until as Date) : undefined,
            ),
          };
        } else admitted.push({ index, input, state, cursor: big(state.last_nsu) });
      }
    }
    if (admitted.length === 0) return out;

    // The cursor covers what is persisted: the stored one, or the highest NSU in the tables if higher
    // (unless a reset is pending: then exactly the reset value).
    const scanned = admitted.filter((a) => Number(a.state.reset_pending) !== 1);
    const persisted = await maxPersistedNsus(
      conn,
      scanned.map((a) => a.input.feed),
    );
    scanned.forEach((a, i) => {
      a.cursor = maxBig(a.cursor, persisted[i]!);
    });

    // A run left RUNNING by an older fence is closed as ABANDONED.
    const superseded = admitted.filter((a) => a.state.status === "running" && a.state.current_run_id !== null);
    if (superseded.length > 0) {
      const v = valuesTable(
        ["id", "finished_at", "message"],
        superseded.map((a) => [
          String(a.state.current_run_id),
          a.state.db_now,
          `superseded by fence token ${a.input.fence} (${a.input.holder})`,
        ]),
      );
      await conn.query(
        `UPDATE nfse_sync_runs r JOIN (${v.sql}) v ON r.id = CAST(v.id AS UNSIGNED)
            SET r.outcome = 'abandoned', r.finished_at = v.finished_at, r.error_message = v.message
          WHERE r.outcome = 'running'`,
        v.params,
      );
    }

    const [ins] = await conn.query<ResultSetHeader>(
      `INSERT INTO nfse_sync_runs (ibge, ambiente, tipo_nsu, trigger_kind, pool, holder, fence_token, started_at, from_nsu, to_nsu) VALUES ${admitted
        .map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .join(", ")}`,
      admitted.flatMap((a) => [
        ...feedParams(a.input.feed),
        a.input.trigger,
        a.input.pool,
        a.input.holder,
        a.input.fence.toString(),
        a.state.db_now,
        a.cursor.toString(),
        a.cursor.toString(),
      ]),
    );
    // The new runs, found by feed among the ids from the first one inserted: each feed's state row is
    // locked by this transaction, so no other run of these feeds can have been inserted since (whatever
    // the server's auto-increment lock mode makes of the ids of a multi-row INSERT).
    const where = feedsWhere(
      admitted.map((a) => a.input.feed),
      "",
    );
    const [runs] = await conn.query<RowDataPacket[]>(`SELECT * FROM nfse_sync_runs WHERE id >= ? AND (${where.sql})`, [
      ins.insertId,
      ...where.params,
    ]);
    const runOf = new Map(runs.map((r) => [rowFeedKey(r), r]));
    if (runOf.size !== admitted.length) throw new Error(`BeginRuns inserted ${admitted.length} runs but read back ${runOf.size}`);

    // The conditional write that records each fence (0008): kept conditional although the rows are
    // locked above, so that the fence rule is in the statement that writes it.
    const v = valuesTable(
      ["ibge", "ambiente", "tipo_nsu", "fence", "holder", "locked_at", "run_id", "new_cursor"],
      admitted.map((a) => [
        ...feedParams(a.input.feed),
        a.input.fence.toString(),
        a.input.holder,
        a.state.db_now,
        String(runOf.get(feedKey(a.input.feed))!.id),
        a.cursor.toString(),
      ]),
    );
    const [upd] = await conn.query<ResultSetHeader>(
      `UPDATE nfse_sync_state s JOIN (${v.sql}) v ON s.ibge = v.ibge AND s.ambiente = v.ambiente AND s.tipo_nsu = v.tipo_nsu
          SET s.fence_token = v.fence, s.fence_holder = v.holder, s.status = 'running', s.locked_by = v.holder,
              s.locked_at = v.locked_at, s.current_run_id = v.run_id, s.reset_pending = 0,
              s.last_nsu = GREATEST(s.last_nsu, CAST(v.new_cursor AS UNSIGNED))
        WHERE s.fence_token <= CAST(v.fence AS UNSIGNED)`,
      v.params,
    );
    // Under the row locks taken above no newer fence can have committed in between: a miss is a bug.
    if (upd.affectedRows !== admitted.length) throw new Error(`BeginRuns recorded ${upd.affectedRows} of ${admitted.length} fences`);
    for (const a of admitted) out[a.index] = { ok: true, value: response(a.state, runOf.get(feedKey(a.input.feed))!, a.cursor) };
    return out;
  });
}
