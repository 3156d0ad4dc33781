// Runs in a worker thread: renders one ficha per message so PDF drawing never blocks the event loop
// that serves RPCs and heartbeats queue messages.
import { parentPort } from "node:worker_threads";
import { isCobrancaError, renderizarBoletoPdf, type FichaInput } from "../../../libs/cobranca/index.js";

export interface RenderRequest {
  id: number;
  ficha: FichaInput;
}

export type RenderReply =
  | { id: number; ok: true; pdf: Uint8Array }
  | { id: number; ok: false; code: string; field: string; message: string; cobranca: boolean };

parentPort?.on("message", (req: RenderRequest) => {
  renderizarBoletoPdf(req.ficha).then(
    (pdf) => parentPort!.postMessage({ id: req.id, ok: true, pdf } satisfies RenderReply, [pdf.buffer as ArrayBuffer]),
    (err: unknown) => {
      const reply: RenderReply = isCobrancaError(err)
        ? { id: req.id, ok: false, code: err.code, field: err.field ?? "", message: err.message, cobranca: true }
        : { id: req.id, ok: false, code: "PDF_FALHOU", field: "", message: (err as Error)?.message ?? String(err), cobranca: false };
      parentPort!.postMessage(reply);
    },
  );
});
