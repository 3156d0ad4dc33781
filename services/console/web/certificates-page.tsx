// "Certificados": a municipality's active and past certificates with their expiry, and (administrators
// only) importing a new PFX. The file and its password go to the server in one request; the password
// lives only in the form field and is cleared as soon as the request is sent.
import { useEffect, useRef, useState } from "preact/hooks";
import type { CertificateView, Me } from "../api-types.js";
import {
  CERTIFICATE_STATUS_LABELS,
  daysToExpiry,
  describeExpiry,
  EXPIRY_WARNING_DAYS,
  formatDateTime,
  formatTaxId,
} from "../labels-nfse.js";
import { api, ApiFailure } from "./api.js";
import { MunicipioPicker, useMunicipios } from "./municipio-picker.js";

const MAX_PFX_BYTES = 64 * 1024;

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function CertificatesPage({ me, onSignedOut }: { me: Me; onSignedOut: () => void }) {
  const municipios = useMunicipios();
  const [ibge, setIbge] = useState("");
  const [list, setList] = useState<CertificateView[] | undefined>();
  const [error, setError] = useState("");
  const [result, setResult] = useState("");
  const [busy, setBusy] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);

  const load = async (which: string) => {
    if (!which) return setList(undefined);
    try {
      setList((await api.certificates(which)).certificates);
      setError("");
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
      setError(`Falha ao listar: ${(err as Error).message}`);
    }
  };
  useEffect(() => {
    void load(ibge);
  }, [ibge]);

  const importPfx = async (e: Event) => {
    e.preventDefault();
    const file = fileInput.current?.files?.[0];
    const password = passwordInput.current?.value ?? "";
    // The password is read once from the field and the field emptied before anything else can keep it.
    if (passwordInput.current) passwordInput.current.value = "";
    setResult("");
    if (!ibge) return setResult("Escolha o município.");
    if (!file) return setResult("Escolha o arquivo PFX.");
    if (file.size > MAX_PFX_BYTES) return setResult(`O arquivo tem ${file.size} bytes; o limite é ${MAX_PFX_BYTES}.`);
    setBusy(true);
    try {
      const res = await api.importCertificate(ibge, base64(new Uint8Array(await file.arrayBuffer())), password);
      const c = res.certificate;
      setResult(
        `${res.created ? "Importado" : "Já estava no cofre"}: CNPJ ${formatTaxId(c.cnpj)}, válido até ${formatDateTime(c.notAfter)}${
          res.activated ? " — agora é o certificado ativo" : ""
        }.`,
      );
      if (fileInput.current) fileInput.current.value = "";
      await load(ibge);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
      setResult(`Importação recusada: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const now = new Date();
  return (
    <section aria-labelledby="certs-title">
      <h2 id="certs-title">Certificados</h2>
      <div class="filters">
        <MunicipioPicker value={ibge} onChange={setIbge} municipios={municipios} />
      </div>
      <p role="alert" class="error">
        {error}
      </p>
      {list && (
        <div class="table-wrap">
          <table class="feeds" data-testid="certificates">
            <caption>
              {list.length} {list.length === 1 ? "certificado" : "certificados"}
            </caption>
            <thead>
              <tr>
                <th scope="col">Situação</th>
                <th scope="col">CNPJ</th>
                <th scope="col">Titular</th>
                <th scope="col">Emissor</th>
                <th scope="col">Válido de</th>
                <th scope="col">Válido até</th>
                <th scope="col">Vencimento</th>
                <th scope="col">Importado em</th>
              </tr>
            </thead>
            <tbody>
              {list.map((c) => {
                const soon = c.notAfter !== undefined && c.status === "active" && daysToExpiry(c.notAfter, now) < EXPIRY_WARNING_DAYS;
                return (
                  <tr key={c.id} data-status={c.status}>
                    <td>{CERTIFICATE_STATUS_LABELS[c.status]}</td>
                    <td>{formatTaxId(c.cnpj)}</td>
                    <td class="wrap">{c.subject}</td>
                    <td class="wrap">{c.issuer}</td>
                    <td>{formatDateTime(c.notBefore)}</td>
                    <td>{formatDateTime(c.notAfter)}</td>
                    <td class={soon ? "state-error" : ""}>{describeExpiry(c.notAfter, now)}</td>
                    <td>{formatDateTime(c.createdAt)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {list?.length === 0 && <p class="muted">Nenhum certificado no cofre para este município.</p>}
      {me.canAdmin && ibge && (
        <form class="filters wrap" aria-labelledby="import-title" onSubmit={(e) => void importPfx(e)}>
          <h3 id="import-title">Importar certificado A1 (PFX)</h3>
          <label>
            Arquivo PFX
            <input ref={fileInput} type="file" accept=".pfx,.p12,application/x-pkcs12" required />
          </label>
          <label>
            Senha do PFX
            <input ref={passwordInput} type="password" autoComplete="off" name="pfx-password" />
          </label>
          <button type="submit" disabled={busy}>
            Importar
          </button>
        </form>
      )}
      <p role="status" data-testid="import-result">
        {result}
      </p>
    </section>
  );
}
