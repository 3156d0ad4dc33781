import { AuthenticationError, KeyUnavailableError, type Keyring, type SecretField } from "./crypto.js";
import type { CertificateRow, SealedSecrets } from "./repository.js";
import { credentialsRefused } from "./errors.js";

/** The plaintext secrets of one certificate. Held in memory only as long as a call needs them. */
export interface PlainSecrets {
  pfx: Buffer;
  password: Buffer;
  privateKey: Buffer;
  chain: Buffer;
}

const FIELDS: [keyof PlainSecrets, SecretField][] = [
  ["pfx", "pfx"],
  ["password", "password"],
  ["privateKey", "private_key"],
  ["chain", "chain"],
];

type RowIdentity = Pick<CertificateRow, "fingerprint" | "ibge">;

export function sealAll(keyring: Keyring, row: RowIdentity, plain: PlainSecrets, keyId = keyring.activeKeyId): SealedSecrets {
  const seal = (field: SecretField, value: Buffer) => keyring.seal(value, { fingerprint: row.fingerprint, ibge: row.ibge, field }, keyId);
  return {
    pfx: seal("pfx", plain.pfx),
    password: seal("password", plain.password),
    privateKey: seal("private_key", plain.privateKey),
    chain: seal("chain", plain.chain),
  };
}

/** Decrypts the named secrets of a row; throws KeyUnavailableError or AuthenticationError. */
export function openSome<K extends keyof PlainSecrets>(
  keyring: Keyring,
  row: CertificateRow,
  sealed: SealedSecrets,
  names: readonly K[],
): Pick<PlainSecrets, K> {
  const out = {} as Pick<PlainSecrets, K>;
  for (const [name, field] of FIELDS) {
    if (!(names as readonly string[]).includes(name)) continue;
    const value = sealed[name];
    if (value === null) throw new AuthenticationError(field);
    out[name as K] = keyring.open(
      value,
      { fingerprint: row.fingerprint, ibge: row.ibge, field },
      row.keyId,
      row.algorithm,
    ) as PlainSecrets[K];
  }
  return out;
}

export function openAll(keyring: Keyring, row: CertificateRow, sealed: SealedSecrets): PlainSecrets {
  return openSome(keyring, row, sealed, ["pfx", "password", "privateKey", "chain"]);
}

/** Why a row cannot be decrypted, in words an operator can act on. */
export function describeDecryptFailure(err: unknown): string | undefined {
  if (err instanceof KeyUnavailableError) return `encrypted under master key '${err.keyId}', which is not configured`;
  if (err instanceof AuthenticationError)
    return `${err.field} ciphertext failed authentication (tampered, moved from another row, or wrong key bytes)`;
  return undefined;
}

/** Maps a decryption failure to the contract's codes: missing key FAILED_PRECONDITION, bad ciphertext DATA_LOSS. */
export function decryptError(err: unknown, row: CertificateRow): unknown {
  if (err instanceof KeyUnavailableError) {
    return credentialsRefused(
      "MASTER_KEY_NOT_CONFIGURED",
      `certificate ${row.id} is encrypted under master key '${err.keyId}', which is not configured in this vault`,
      { certificateId: row.id, keyId: err.keyId },
    );
  }
  if (err instanceof AuthenticationError) {
    return credentialsRefused(
      "CIPHERTEXT_TAMPERED",
      `certificate ${row.id}: the stored ${err.field} ciphertext failed authentication (tampered, or moved from another row); re-import the certificate`,
      { certificateId: row.id },
    );
  }
  return err;
}
