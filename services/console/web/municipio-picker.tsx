// The municipality select shared by Documentos and Certificados.
import { useEffect, useState } from "preact/hooks";
import type { MunicipioView } from "../api-types.js";
import { api } from "./api.js";

export function useMunicipios(): MunicipioView[] {
  const [list, setList] = useState<MunicipioView[]>([]);
  useEffect(() => {
    api.municipios().then(
      (r) => setList(r.municipios),
      () => undefined,
    );
  }, []);
  return list;
}

export function MunicipioPicker(props: { value: string; onChange: (ibge: string) => void; municipios: MunicipioView[] }) {
  return (
    <label>
      Município
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)} required>
        <option value="">escolha…</option>
        {props.municipios.map((m) => (
          <option value={m.ibge}>
            {m.name} ({m.uf}) · {m.ibge}
          </option>
        ))}
      </select>
    </label>
  );
}
