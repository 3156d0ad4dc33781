// Runs in a worker thread: renders one ficha per message so PDF drawing never blocks the event loop
// that serves RPCs and heartbeats queue messages.
import { isCobrancaError, renderizarBoletoPdf, type FichaInput } from "../../../libs/cobranca/index.js";
import { serveTasks } from "../../../libs/worker-pool/index.js";

export interface RenderRefusal {
  code: string;
  field: string;
  message: string;
  /** A refusal by libs/cobranca (deterministic), not a bug of the renderer. */
  cobranca: boolean;
}

serveTasks<FichaInput, Uint8Array, RenderRefusal>(
  (ficha) => renderizarBoletoPdf(ficha),
  (err) =>
    isCobrancaError(err)
      ? { code: err.code, field: err.field ?? "", message: err.message, cobranca: true }
      : { code: "PDF_FALHOU", field: "", message: (err as Error)?.message ?? String(err), cobranca: false },
  (pdf) => [pdf.buffer as ArrayBuffer],
);
