-- A payment attempt's failure is stored as its typed code, never as its message text (the text
-- is the channel's to word: the API's error message, the dashboard's own language). The texts
-- written so far map to their codes one to one; any other text is left as it is. No CHECK names
-- the codes yet: a process of the previous version, still running while a new one migrates,
-- writes the text, and must not fail a payment attempt on it.
UPDATE payment_intents SET last_failure = CASE
    WHEN last_failure = 'Insufficient balance.' THEN 'INSUFFICIENT_BALANCE'
    WHEN last_failure LIKE 'The sandbox amount % always fails.' THEN 'SANDBOX_DECLINED'
    WHEN last_failure = 'Simulated payment failure.' THEN 'SIMULATED_FAILURE'
    ELSE last_failure
  END
WHERE last_failure IS NOT NULL;
