// The npm peer `gerar-boletos@1.4.5` (pdfkit 0.10, embedded TrueType fonts), loaded through require
// because it is CommonJS without types. Only what the benchmark calls is typed here.
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import type { PeerBoleto } from "./boletos.js";

interface PeerModule {
  Bancos: { Bradesco: new () => unknown };
  Boletos: new (
    args: Record<string, unknown>,
  ) => {
    gerarBoleto(): void;
    pdfStream(stream: Writable): Promise<unknown>;
    boletoInfo: unknown;
  };
}
interface PeerGerador {
  new (boleto: unknown): { gerarLinhaDigitavel(): Promise<{ linha: string }[]> };
}

const require = createRequire(import.meta.url);
const peer = require("gerar-boletos") as PeerModule;
const Gerador = require("gerar-boletos/lib/boleto/gerador-de-boleto.js") as PeerGerador;

// The peer parses dates with `new Date("MM-DD-YYYY")` ("usa" locale) and refuses years ≥ 2024.
const usa = (d: { year: number; month: number; day: number }) =>
  `${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}-${d.year}`;

function build(b: PeerBoleto) {
  const endereco = (a: PeerBoleto["pagador"]) => ({
    logradouro: a.endereco,
    bairro: a.bairro,
    cidade: a.cidade,
    estadoUF: a.uf,
    cep: a.cep,
  });
  const boleto = new peer.Boletos({
    banco: new peer.Bancos.Bradesco(),
    pagador: { nome: b.pagador.nome, RegistroNacional: b.pagador.documento, endereco: endereco(b.pagador) },
    instrucoes: b.instrucoes,
    beneficiario: {
      nome: b.beneficiario.nome,
      cnpj: b.beneficiario.documento,
      dadosBancarios: {
        carteira: b.carteira,
        agencia: b.agencia,
        agenciaDigito: "0",
        conta: b.conta,
        contaDigito: "0",
        nossoNumero: b.nossoNumero.padStart(11, "0"),
        nossoNumeroDigito: b.nossoNumeroDv,
      },
      endereco: endereco(b.beneficiario),
    },
    boleto: {
      numeroDocumento: b.numeroDocumento,
      especieDocumento: "DM",
      valor: b.valorCentavos / 100,
      datas: { vencimento: usa(b.vencimento), processamento: usa(b.emissao), documentos: usa(b.emissao) },
    },
  });
  boleto.gerarBoleto();
  return boleto;
}

/** Data → PDF bytes in memory, the peer's way (its own barcode and layout). */
export async function renderPeer(b: PeerBoleto): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  const finished = new Promise<void>((resolve, reject) => sink.once("finish", resolve).once("error", reject));
  await build(b).pdfStream(sink);
  // pdfStream resolves at pdf.end(); the bytes are complete once the sink has finished.
  await finished;
  return Buffer.concat(chunks);
}

/** The peer's linha digitável, digits only: proof that both libraries render the same boleto. */
export async function peerLinha(b: PeerBoleto): Promise<string> {
  const [first] = await new Gerador(build(b).boletoInfo).gerarLinhaDigitavel();
  return (first?.linha ?? "").replace(/\D/g, "");
}
