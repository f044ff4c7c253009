-- The shop's name (issue 54): what the storefront and the customer's order pages show. It follows
-- the business's name, kept in step by every rename, unless the business gives its shop a name of
-- its own in Settings (own_name). Until now a shop kept the name its business had when it was
-- created: the shops of a renamed business catch up here.
ALTER TABLE shops ADD COLUMN own_name boolean NOT NULL DEFAULT false;
UPDATE shops SET name = businesses.name
  FROM businesses
  WHERE businesses.id = shops.business_id AND shops.name <> businesses.name;
