-- Product externalIds are NFC from now on (the API normalises them on every write and lookup).
-- Rows stored before are normalised here, except where that would give a live product the
-- externalId another live product of the shop has or would get (two spellings of one name, kept
-- as two products until then): those stay as they are, still found by their exact spelling, for
-- the merchant to rename one. A deleted product's externalId is outside the unique index and is
-- normalised whatever it holds.
UPDATE products AS p
SET external_id = normalize(p.external_id, NFC)
WHERE p.external_id IS NOT NULL
  AND p.external_id IS NOT NFC NORMALIZED
  AND (
    p.deleted_at IS NOT NULL
    OR NOT EXISTS (
      SELECT 1
      FROM products q
      WHERE q.shop_id = p.shop_id
        AND q.id <> p.id
        AND q.deleted_at IS NULL
        AND q.external_id IS NOT NULL
        AND normalize(q.external_id, NFC) = normalize(p.external_id, NFC)
    )
  );
