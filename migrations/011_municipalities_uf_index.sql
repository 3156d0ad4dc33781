-- 011: feeds by the municipality's UF. The console's Sincronização page filters by UF in the store's SQL
-- (ListSyncStates `uf`, docs/decisions/0026-feed-filters-in-sql.md); this index finds a UF's few
-- municipalities without reading all of them.

ALTER TABLE municipalities ADD KEY ix_municipalities_uf (uf, ibge);
