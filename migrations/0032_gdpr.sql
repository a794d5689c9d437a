-- Legal documents and GDPR exports (docs/legal.md, docs/gdpr.md).

-- The legal documents Valise publishes, every version kept: a document's current version is its
-- newest one in effect (effective_date reached). The same for every workspace: no tenant columns.
CREATE TABLE legal_documents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 100),
  language text NOT NULL CHECK (language = ANY (ARRAY['fr'])),
  version text NOT NULL CHECK (length(btrim(version)) BETWEEN 1 AND 50),
  title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
  effective_date date NOT NULL,
  body text NOT NULL CHECK (length(btrim(body)) > 0),
  published_at timestamptz NOT NULL DEFAULT ms_now(),
  CONSTRAINT legal_documents_version_unique UNIQUE (slug, language, version)
);

CREATE INDEX legal_documents_current ON legal_documents (slug, language, effective_date DESC, published_at DESC);

-- A GDPR export: what Valise holds about a workspace's environment or one of its users, collected
-- by the gdprExport workflow, written sealed to the object store and deleted after its retention.
CREATE TABLE gdpr_exports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  requested_by uuid NOT NULL,
  -- null: the whole workspace (its environment); otherwise the one user it is about.
  subject_user_id uuid,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed', 'expired')),
  -- The family being collected while running: what the workflow shows as progress.
  current_family text,
  families_done integer NOT NULL DEFAULT 0,
  families_total integer NOT NULL DEFAULT 0,
  object_key text,
  -- The export's data key, wrapped by the master keyring (bound to the export's id).
  data_key_wrapped text,
  size bigint,
  error text,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  completed_at timestamptz,
  retention_until timestamptz,
  expired_at timestamptz,
  objects_deleted_at timestamptz
);

CREATE INDEX gdpr_exports_listing ON gdpr_exports (workspace_id, environment, created_at DESC, id DESC);

INSERT INTO legal_documents (slug, language, version, title, effective_date, body) VALUES
('conditions-utilisation', 'fr', '2026-01-01', 'Conditions générales d''utilisation', '2026-01-01',
$$Valise est un service de transfert de fichiers chiffrés, édité pour des clients professionnels.

1. Objet. Les présentes conditions régissent l'accès à l'API, au SDK, à l'outil en ligne de commande et aux pages de partage de Valise.
2. Compte et clés. Le client est responsable des clés d'API émises pour son espace de travail et de leur confidentialité. Une clé compromise doit être révoquée sans délai.
3. Contenus. Le client reste seul responsable des fichiers qu'il transfère. Il s'interdit tout contenu illicite, malveillant ou portant atteinte aux droits de tiers. Les fichiers sont analysés contre les logiciels malveillants et peuvent être bloqués.
4. Chiffrement. Les fichiers sont chiffrés au repos (AES-256-GCM). En mode de bout en bout, la clé reste chez le client : une clé perdue rend les données irrécupérables.
5. Disponibilité. Valise s'efforce d'assurer un service continu, sans garantie d'absence d'interruption.
6. Durée et résiliation. Le client peut cesser d'utiliser le service à tout moment ; ses données sont alors supprimées selon la politique de confidentialité.
7. Droit applicable. Les présentes conditions sont soumises au droit français.$$),
('politique-confidentialite', 'fr', '2026-01-01', 'Politique de confidentialité', '2026-01-01',
$$Cette politique décrit les données personnelles que Valise traite et vos droits.

1. Données traitées : adresses électroniques des utilisateurs et des destinataires, noms fournis, adresses IP et agents utilisateurs des accès, journal d'audit, noms et tailles des fichiers transférés. Le contenu des fichiers est chiffré et n'est pas exploité.
2. Finalités : fournir le service de transfert, en assurer la sécurité (détection d'abus, journal d'audit) et respecter nos obligations légales.
3. Hébergement : les données sont hébergées dans l'Union européenne.
4. Durées de conservation : les fichiers sont supprimés à l'expiration du transfert ; les journaux sont conservés le temps nécessaire à la sécurité du service.
5. Vos droits : accès, rectification, effacement, limitation, portabilité et opposition, conformément au RGPD. L'export (GET /v1/gdpr/export) et l'effacement sont disponibles ; vous pouvez aussi saisir la CNIL.$$),
('accord-traitement-donnees', 'fr', '2026-01-01', 'Accord de traitement des données (DPA)', '2026-01-01',
$$Accord conclu au titre de l'article 28 du RGPD entre le client (responsable du traitement) et Valise (sous-traitant).

1. Objet : Valise traite les données personnelles contenues dans les transferts et métadonnées uniquement pour fournir le service, sur instruction documentée du client.
2. Confidentialité : les personnes autorisées à traiter les données sont soumises à une obligation de confidentialité.
3. Sécurité : chiffrement AES-256-GCM au repos, clés scellées, contrôle d'accès par clés d'API à portée limitée, journal d'audit.
4. Sous-traitants ultérieurs : Valise n'y recourt qu'avec l'autorisation écrite préalable du client, au sein de l'Union européenne.
5. Assistance : Valise aide le client à répondre aux demandes d'exercice des droits (export, effacement) et à notifier toute violation de données dans les meilleurs délais.
6. Fin du contrat : Valise supprime les données du client, sauf obligation légale de conservation.$$);

-- A JSON document with every string member equal (case aside) to one of `erased` replaced by
-- `replacement`, its shape kept: how a GDPR erasure (lib/gdpr/erasure.ts) removes a person's
-- addresses and names from event payloads, rule conditions and submitted metadata.
CREATE FUNCTION erase_json_strings(document jsonb, erased text[], replacement text) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  CASE jsonb_typeof(document)
    WHEN 'string' THEN
      RETURN CASE WHEN lower(document #>> '{}') = ANY(erased) THEN to_jsonb(replacement) ELSE document END;
    WHEN 'object' THEN
      RETURN COALESCE(
        (SELECT jsonb_object_agg(key, erase_json_strings(value, erased, replacement)) FROM jsonb_each(document)),
        '{}'::jsonb);
    WHEN 'array' THEN
      RETURN COALESCE(
        (SELECT jsonb_agg(erase_json_strings(value, erased, replacement) ORDER BY position)
         FROM jsonb_array_elements(document) WITH ORDINALITY AS element(value, position)),
        '[]'::jsonb);
    ELSE
      RETURN document;
  END CASE;
END $$;
