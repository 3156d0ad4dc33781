// PDF rendering alone: the same boletos (same linha digitável, checked) from data to PDF bytes in
// memory with libs/cobranca and with the peer, interleaved so machine noise hits both alike.
import { renderizarBoletoPdf } from "../../libs/cobranca/index.js";
import { boletoPair } from "./boletos.js";
import { peerLinha, renderPeer } from "./peer.js";
import { median } from "../stats.js";

export interface PdfResult {
  boletos: number;
  oursMs: number;
  peerMs: number;
  oursBytes: number;
  peerBytes: number;
}

export async function runPdf(boletos: number, warmup = 5): Promise<PdfResult> {
  const pairs = Array.from({ length: boletos }, (_, i) => boletoPair(i + 1));
  for (const p of pairs.slice(0, 3)) {
    const theirs = await peerLinha(p.data);
    if (theirs !== p.linha) throw new Error(`not the same boleto: ours ${p.linha}, peer ${theirs}`);
  }
  for (const p of pairs.slice(0, warmup)) {
    await renderizarBoletoPdf(p.ficha);
    await renderPeer(p.data);
  }
  const ours: number[] = [];
  const peer: number[] = [];
  let oursBytes = 0;
  let peerBytes = 0;
  for (const [i, p] of pairs.entries()) {
    // Alternate which library goes first, so neither always runs right after the other's garbage.
    const steps: [number[], () => Promise<Uint8Array>][] = [
      [ours, () => renderizarBoletoPdf(p.ficha)],
      [peer, () => renderPeer(p.data)],
    ];
    if (i % 2) steps.reverse();
    for (const [into, fn] of steps) {
      const t0 = performance.now();
      const bytes = await fn();
      into.push(performance.now() - t0);
      if (into === ours) oursBytes += bytes.length;
      else peerBytes += bytes.length;
    }
  }
  return { boletos, oursMs: median(ours), peerMs: median(peer), oursBytes: oursBytes / boletos, peerBytes: peerBytes / boletos };
}
