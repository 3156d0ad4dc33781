/** NATS KV keys allow only these characters; a feed key is built from validated parts. */
const KEY = /^[-/_=.a-zA-Z0-9]+$/;

export function assertLeaseKey(key: string): void {
  if (!KEY.test(key) || key.startsWith(".") || key.endsWith(".") || key.includes("..")) {
    throw new Error(`invalid lease key ${JSON.stringify(key)}`);
  }
}

/** The lease key of an NFS-e feed: one consumer per (municipality, ambiente, tipo NSU). */
export function feedLeaseKey(ibge: string, ambiente: number | string, tipoNsu: string): string {
  const key = `feed.${ibge}.${ambiente}.${tipoNsu}`;
  assertLeaseKey(key);
  return key;
}
