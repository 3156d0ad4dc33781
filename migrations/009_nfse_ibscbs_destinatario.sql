-- 009: the tax reform's IBS/CBS (NT 004 v2.0, layout 1.01) and the destinatário, as index columns of the
-- per-municipality documents template (the typed Document in documento_pb holds every extracted field; these
-- are the ones integrators filter and sum by). Money is BIGINT cents; rates are percent with 4 decimals
-- (IBS/CBS rates have 4, unlike pAliqAplic). Codes are ascii like the rest of the template. Tables copied
-- from the template before this file get the same columns from the store at start
-- (services/store/repo/table-shape.ts), because plain SQL cannot loop over them.
ALTER TABLE nfse_documentos_template
  ADD COLUMN destinatario_documento VARCHAR(14) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER intermediario_nome,
  ADD COLUMN destinatario_nif VARCHAR(40) NULL DEFAULT NULL AFTER destinatario_documento,
  ADD COLUMN destinatario_nome VARCHAR(300) NULL DEFAULT NULL AFTER destinatario_nif,
  ADD COLUMN ibscbs_localidade_incidencia CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER tipo_retencao_issqn,
  ADD COLUMN ibscbs_cst CHAR(3) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER ibscbs_localidade_incidencia,
  ADD COLUMN ibscbs_classificacao CHAR(6) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL AFTER ibscbs_cst,
  ADD COLUMN ibscbs_base_calculo BIGINT NULL DEFAULT NULL AFTER ibscbs_classificacao,
  ADD COLUMN ibs_uf_aliquota DECIMAL(7,4) NULL DEFAULT NULL AFTER ibscbs_base_calculo,
  ADD COLUMN ibs_uf_valor BIGINT NULL DEFAULT NULL AFTER ibs_uf_aliquota,
  ADD COLUMN ibs_mun_aliquota DECIMAL(7,4) NULL DEFAULT NULL AFTER ibs_uf_valor,
  ADD COLUMN ibs_mun_valor BIGINT NULL DEFAULT NULL AFTER ibs_mun_aliquota,
  ADD COLUMN ibs_valor_total BIGINT NULL DEFAULT NULL AFTER ibs_mun_valor,
  ADD COLUMN cbs_aliquota DECIMAL(7,4) NULL DEFAULT NULL AFTER ibs_valor_total,
  ADD COLUMN cbs_valor BIGINT NULL DEFAULT NULL AFTER cbs_aliquota,
  ADD COLUMN valor_total_nf BIGINT NULL DEFAULT NULL AFTER cbs_valor,
  ADD KEY ix_destinatario (destinatario_documento, data_emissao);
