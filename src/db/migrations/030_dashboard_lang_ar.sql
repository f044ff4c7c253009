-- The dashboard speaks Arabic too (issue 38): a session may keep 'ar' as its language. The
-- CHECK written inline in 012 has PostgreSQL's default name.
ALTER TABLE dashboard_sessions DROP CONSTRAINT dashboard_sessions_lang_check;
ALTER TABLE dashboard_sessions ADD CONSTRAINT dashboard_sessions_lang_check CHECK (lang IN ('en', 'fr', 'ar'));
