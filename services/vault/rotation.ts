import { failedPrecondition, invalidArgument } from "../../libs/rpc/errors.js";
import { ALGORITHM, type Keyring } from "./crypto.js";
import type { CertificateRepository } from "./repository.js";
import { describeDecryptFailure, openAll, sealAll } from "./secrets.js";

export const DEFAULT_ROTATION_ROWS = 100;
export const MAX_ROTATION_ROWS = 1000;
const PAGE = 100;

export interface RotationResult {
  targetKeyId: string;
  rowsReencrypted: number;
  rowsRemaining: number;
  done: boolean;
  undecryptable: string[];
}

export interface UndecryptableRow {
  id: string;
  ibge: string;
  keyId: string;
  problem: string;
}

/**
 * Re-encrypts up to `maxRows` rows not yet under `targetKeyId`, in id order. Each row moves in one
 * UPDATE guarded by its old key id, so an interrupted call leaves every row either fully old or fully
 * new, and the next call simply continues. Rows no configured key opens are skipped and reported;
 * they do not count against `maxRows`, so they cannot starve the rows behind them.
 */
export async function rotateMasterKey(
  repo: CertificateRepository,
  keyring: Keyring,
  targetKeyId: string,
  maxRows: number,
): Promise<RotationResult> {
  const target = targetKeyId === "" ? keyring.activeKeyId : targetKeyId;
  if (!keyring.has(target)) throw failedPrecondition(`target master key '${target}' is not configured in this vault`);
  if (maxRows < 0) throw invalidArgument("max_rows must not be negative");
  const limit = Math.min(maxRows === 0 ? DEFAULT_ROTATION_ROWS : maxRows, MAX_ROTATION_ROWS);
  await repo.recordKeyCheckValue(target, keyring.checkValue(target));

  let reencrypted = 0;
  const undecryptable: string[] = [];
  let after = "0";
  scan: for (;;) {
    const page = await repo.pageWithSecrets(after, PAGE, target);
    for (const { row, secrets } of page) {
      after = row.id;
      let plain;
      try {
        plain = openAll(keyring, row, secrets);
      } catch (err) {
        if (describeDecryptFailure(err) === undefined) throw err;
        undecryptable.push(row.id);
        continue;
      }
      const moved = await repo.reencrypt(row.id, row.keyId, target, ALGORITHM, sealAll(keyring, row, plain, target));
      if (moved) reencrypted++;
      if (reencrypted >= limit) break scan;
    }
    if (page.length < PAGE) break;
  }
  const remaining = Math.max(0, (await repo.countNotUnderKey(target)) - undecryptable.length);
  return {
    targetKeyId: target,
    rowsReencrypted: reencrypted,
    rowsRemaining: remaining,
    done: remaining === 0 && undecryptable.length === 0,
    undecryptable,
  };
}

/** Every row whose secrets the configured keys cannot open, with the reason; for the start-up report. */
export async function findUndecryptable(repo: CertificateRepository, keyring: Keyring): Promise<UndecryptableRow[]> {
  const found: UndecryptableRow[] = [];
  let after = "0";
  for (;;) {
    const page = await repo.pageWithSecrets(after, PAGE);
    for (const { row, secrets } of page) {
      after = row.id;
      try {
        openAll(keyring, row, secrets);
      } catch (err) {
        const problem = describeDecryptFailure(err);
        if (problem === undefined) throw err;
        found.push({ id: row.id, ibge: row.ibge, keyId: row.keyId, problem });
      }
    }
    if (page.length < PAGE) return found;
  }
}

/**
 * Refuses key bytes that differ from what a key id meant when it was first used, and records the check
 * value of every configured key not yet known.
 */
export async function verifyMasterKeys(repo: CertificateRepository, keyring: Keyring): Promise<void> {
  for (const keyId of keyring.keyIds()) {
    const check = keyring.checkValue(keyId);
    const recorded = await repo.keyCheckValue(keyId);
    if (recorded === undefined) await repo.recordKeyCheckValue(keyId, check);
    else if (recorded !== check) {
      throw new Error(
        `master key '${keyId}' is not the key this database recorded under that id (vault_master_keys): ` +
          `configure the original bytes for '${keyId}', or give a new key a new id`,
      );
    }
  }
}
