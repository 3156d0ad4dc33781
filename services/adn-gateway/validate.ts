// Request validation: anything malformed is INVALID_ARGUMENT before any vault or ADN call.
import { chaveProblem } from "../../libs/adn/chave.js";
import type { TipoNsuParam } from "../../libs/adn/http.js";
import { Ambiente, TipoNsu, type FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { invalidArgument } from "../../libs/rpc/errors.js";

const TIPO_NSU_PARAM: Partial<Record<TipoNsu, TipoNsuParam>> = {
  [TipoNsu.DISTRIBUICAO]: "DISTRIBUICAO",
  [TipoNsu.RECEPCAO]: "RECEPCAO",
  [TipoNsu.GERAL]: "GERAL",
  [TipoNsu.MEI]: "MEI",
};

export function validIbge(ibge: string, field = "ibge"): string {
  if (!/^\d{7}$/.test(ibge)) throw invalidArgument(`${field} must be a 7-digit IBGE code`);
  return ibge;
}

export function validAmbiente(ambiente: Ambiente, field = "ambiente"): Ambiente.PRODUCAO | Ambiente.PRODUCAO_RESTRITA {
  if (ambiente !== Ambiente.PRODUCAO && ambiente !== Ambiente.PRODUCAO_RESTRITA) {
    throw invalidArgument(`${field} must be AMBIENTE_PRODUCAO or AMBIENTE_PRODUCAO_RESTRITA`);
  }
  return ambiente;
}

export function validFeed(feed: FeedKey | undefined) {
  if (!feed) throw invalidArgument("feed is required");
  const tipoNsu = TIPO_NSU_PARAM[feed.tipoNsu];
  if (!tipoNsu) throw invalidArgument("feed.tipo_nsu must be one of DISTRIBUICAO, RECEPCAO, GERAL, MEI");
  return { ibge: validIbge(feed.ibge, "feed.ibge"), ambiente: validAmbiente(feed.ambiente, "feed.ambiente"), tipoNsu };
}

/**
 * A chave of the right shape (letters only in an alphanumeric CNPJ) with a valid mod-11 check digit: a typo
 * is caught here rather than spent on an ADN call.
 */
export function validChave(chave: string): string {
  const problem = chaveProblem(chave);
  if (problem) throw invalidArgument(`chave ${problem}`);
  return chave;
}
