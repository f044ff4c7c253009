-- The shop's contact as its customers read it on their order page (issue 38): a phone, an email,
-- where an order is collected and whether the shop delivers. An owner enters them in the
-- dashboard's settings; each may stay empty.
ALTER TABLE businesses ADD COLUMN contact_phone text CHECK (contact_phone ~ '^\+[1-9][0-9]{7,14}$');
ALTER TABLE businesses ADD COLUMN contact_email text CHECK (char_length(contact_email) <= 254);
ALTER TABLE businesses ADD COLUMN pickup_address text CHECK (char_length(pickup_address) <= 300);
ALTER TABLE businesses ADD COLUMN delivers boolean NOT NULL DEFAULT false;
