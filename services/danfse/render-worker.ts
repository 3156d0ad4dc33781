// Runs in a worker thread: one DANFSe per message, so drawing never blocks the event loop that serves
// RPCs and streams zips.
import type { Transferable } from "node:worker_threads";
import { DanfseError, type DanfseInput, renderDanfse } from "../../libs/danfse/index.js";
import { serveTasks } from "../../libs/worker-pool/index.js";

export interface DanfseRefusal {
  /** Set when the engine refused the note (DanfseError); otherwise the renderer itself broke. */
  field?: string;
  reason: string;
}

/** Moved, not copied, when the PDF owns its whole buffer (a view into a shared pool must be copied). */
const ownBuffer = (pdf: Uint8Array): Transferable[] =>
  pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength ? [pdf.buffer as ArrayBuffer] : [];

serveTasks<DanfseInput, Uint8Array, DanfseRefusal>(
  (input) => renderDanfse(input),
  (err) => (err instanceof DanfseError ? { field: err.field, reason: err.reason } : { reason: (err as Error)?.message ?? String(err) }),
  ownBuffer,
);
