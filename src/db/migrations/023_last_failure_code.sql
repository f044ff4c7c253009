-- A payment attempt's failure is stored as its typed code, never as its message text (the text
-- is the channel's to word: the API's error message, the dashboard's own language). The texts
-- written so far map to their codes one to one.
UPDATE payment_intents SET last_failure = CASE
    WHEN last_failure = 'Insufficient balance.' THEN 'INSUFFICIENT_BALANCE'
    WHEN last_failure LIKE 'The sandbox amount % always fails.' THEN 'SANDBOX_DECLINED'
    WHEN last_failure = 'Simulated payment failure.' THEN 'SIMULATED_FAILURE'
  END
WHERE last_failure IS NOT NULL;
ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_last_failure_code
  CHECK (last_failure IN ('INSUFFICIENT_BALANCE', 'SANDBOX_DECLINED', 'SIMULATED_FAILURE'));
