// A TLS 1.3 session as the gateway keeps it between a certificate's runs: without the server's certificate
// (docs/decisions/0062-tls-sessions-kept-without-the-server-certificate.md). Node hands a client's session
// over as OpenSSL's DER encoding of SSL_SESSION, and offering it back parses everything in it; the server's
// certificate (the element tagged [3]) was nearly all of that work. A TLS 1.3 resumption does not read it:
// the ticket's key authenticates the server, and Node accepts a resumed TLS 1.3 connection without a peer
// certificate. A TLS 1.2 session is kept whole: there Node refuses a connection whose session has none.

/** The context-specific, constructed tag [3] of SSL_SESSION: the peer's certificate. */
const PEER_CERTIFICATE_TAG = 0xa3;
const SEQUENCE_TAG = 0x30;
const INTEGER_TAG = 0x02;
/** SSL_SESSION's second element, the protocol version, for TLS 1.3: INTEGER 0x0304. */
const TLS13_VERSION = Buffer.from([INTEGER_TAG, 0x02, 0x03, 0x04]);

/** A DER length at `at`: its value and the bytes it took, or undefined when it is not a definite length we read. */
function lengthAt(der: Buffer, at: number): { value: number; size: number } | undefined {
  const first = der[at];
  if (first === undefined) return undefined;
  if (first < 0x80) return { value: first, size: 1 };
  const bytes = first & 0x7f;
  // 0x80 is BER's indefinite length, which DER never uses; more than 4 bytes is not a session.
  if (bytes === 0 || bytes > 4 || at + bytes >= der.length) return undefined;
  let value = 0;
  for (let i = 1; i <= bytes; i++) value = value * 256 + der[at + i]!;
  return { value, size: 1 + bytes };
}

function encodeLength(value: number): Buffer {
  if (value < 0x80) return Buffer.from([value]);
  const bytes: number[] = [];
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/**
 * A TLS 1.3 session without the server's certificate; the session itself when it is of another version,
 * holds no certificate or is not the SEQUENCE of single-byte tags and definite lengths OpenSSL writes (then
 * offering it costs what it did before).
 */
export function withoutPeerCertificate(session: Buffer): Buffer {
  if (session[0] !== SEQUENCE_TAG) return session;
  const outer = lengthAt(session, 1);
  if (!outer || 1 + outer.size + outer.value !== session.length) return session;
  const kept: Buffer[] = [];
  let found = false;
  let element = 0;
  for (let at = 1 + outer.size; at < session.length; element++) {
    const tag = session[at]!;
    // Tag number 31 in the low bits means a multi-byte tag, which SSL_SESSION does not have.
    if ((tag & 0x1f) === 0x1f) return session;
    const length = lengthAt(session, at + 1);
    if (!length) return session;
    const next = at + 1 + length.size + length.value;
    if (next > session.length) return session;
    if (element === 1 && !session.subarray(at, next).equals(TLS13_VERSION)) return session;
    if (tag === PEER_CERTIFICATE_TAG) found = true;
    else kept.push(session.subarray(at, next));
    at = next;
  }
  if (!found) return session;
  const body = Buffer.concat(kept);
  return Buffer.concat([Buffer.from([SEQUENCE_TAG]), encodeLength(body.length), body]);
}
