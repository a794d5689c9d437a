-- A transfer may be restricted to the countries it can be downloaded from (docs/transfers.md,
-- "Countries"): NULL, the default, restricts nothing. The API accepts only ISO 3166-1 alpha-2
-- codes in upper case, each once, at least one (lib/net/countries.ts); the database holds the shape.
ALTER TABLE transfers ADD COLUMN allowed_countries text[];
ALTER TABLE transfers ADD CONSTRAINT transfers_allowed_countries_shape CHECK (
  allowed_countries IS NULL
  OR (cardinality(allowed_countries) BETWEEN 1 AND 300
      AND array_to_string(allowed_countries, ',', '?') ~ '^[A-Z]{2}(,[A-Z]{2})*$')
);
