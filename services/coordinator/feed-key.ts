import { create } from "@bufbuild/protobuf";
import { Ambiente, FeedKeySchema, TipoNsu, type FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { feedLeaseKey } from "../../libs/leases/keys.js";

/** "3550308/PRODUCAO/DISTRIBUICAO": the one string that names a feed in queues, logs and leases. */
export function feedId(feed: FeedKey): string {
  return `${feed.ibge}/${Ambiente[feed.ambiente]}/${TipoNsu[feed.tipoNsu]}`;
}

export function leaseKeyOf(feed: FeedKey): string {
  return feedLeaseKey(feed.ibge, feed.ambiente, TipoNsu[feed.tipoNsu]);
}

export function feedKey(ibge: string, ambiente: Ambiente, tipoNsu: TipoNsu): FeedKey {
  return create(FeedKeySchema, { ibge, ambiente, tipoNsu });
}
