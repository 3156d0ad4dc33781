// Event layouts 1.00 and 1.01 (adn.md §5) → Event. Version drift is absorbed here: `nDFe`|`nDFSe`,
// `nPedRegEvento` ignored, rejection details inside `infRej` (1.00) or directly in the type element.
import type { Event } from "../gen/malha/nfse/v1/event_pb.js";
import { chaveShapeProblem } from "./chave.js";
import { codeFromElementName, codeFromEventId, EVENT_ID_CHAVE, tipoEventoOf } from "./event-codes.js";
import { asciiCode, FieldError, intCode, limitedText, optionalDateTime, taxId, versaoOf } from "./fields.js";
import { attr, child, childNames, text, type XmlNode } from "./xml-tree.js";

/** `root` is the `evento` element. */
export function parseEvento(root: XmlNode): Event {
  const inf = child(root, "infEvento");
  if (!inf) throw new FieldError("infEvento", "is missing", "missing");
  const id = attr(inf, "Id");
  const ped = child(inf, "pedRegEvento", "infPedReg");
  if (!ped) throw new FieldError("pedRegEvento/infPedReg", "is missing", "missing");
  const typeElement = childNames(ped).find((n) => codeFromElementName(n) !== undefined);
  const codigo = (typeElement && codeFromElementName(typeElement)) || codeFromEventId(id);
  if (!codigo) throw new FieldError("event code", "is neither an eNNNNNN element nor in infEvento/@Id", "missing");
  const chave = text(ped, "chNFSe") || (EVENT_ID_CHAVE.exec(id)?.[1] ?? "");
  const chaveFault = chaveShapeProblem(chave);
  if (chaveFault) throw new FieldError("infPedReg/chNFSe", `is not a chave: it ${chaveFault}`, "missing");
  const spec = typeElement ? child(ped, typeElement) : undefined;
  const specPath = `infPedReg/${typeElement ?? "?"}`;
  // 1.00 rejections wrap their reason in infRej.
  const reason = child(spec, "infRej") ?? spec;
  const reasonPath = child(spec, "infRej") ? `${specPath}/infRej` : specPath;
  const seq = text(inf, "nSeqEvento");
  if (seq && !/^\d{1,3}$/.test(seq)) throw new FieldError("nSeqEvento", "is not a number of at most 3 digits");
  const dhEvento = optionalDateTime(ped, "infPedReg/dhEvento", "dhEvento");
  const dhProc = optionalDateTime(inf, "dhProc", "dhProc");
  const autor = taxId(ped, "infPedReg", { cnpj: "CNPJAutor", cpf: "CPFAutor" });
  const chaveSubstituta = text(spec, "chSubstituta");
  const substFault = chaveSubstituta ? chaveShapeProblem(chaveSubstituta) : undefined;
  if (substFault) throw new FieldError(`${specPath}/chSubstituta`, substFault);
  return {
    $typeName: "malha.nfse.v1.Event",
    id,
    chave,
    codigo,
    tipo: tipoEventoOf(codigo),
    nSeqEvento: seq ? Number(seq) : 0,
    dhEvento,
    dhProc,
    versao: versaoOf(root, "evento/@versao"),
    ambGer: intCode(inf, "ambGer", "ambGer"),
    tpAmb: intCode(ped, "infPedReg/tpAmb", "tpAmb"),
    nDfse: text(inf, "nDFSe") || text(inf, "nDFe"),
    autor,
    cMotivo: asciiCode(reason, `${reasonPath}/cMotivo`, 4, "cMotivo"),
    xMotivo: limitedText(reason, `${reasonPath}/xMotivo`, 1000, "xMotivo"),
    chaveSubstituta,
    codEventoBloqueado: text(spec, "codEvento").replace(/^e/, ""),
    cpfAgenteTributario: text(spec, "CPFAgTrib"),
    nProcAdm: text(spec, "nProcAdm"),
    xProcAdm: text(spec, "xProcAdm"),
    idEventoRejeicao: text(spec, "idEvManifRej"),
    idBloqueioOficio: text(spec, "idBloqOfic"),
    xDesc: text(spec, "xDesc"),
  };
}
