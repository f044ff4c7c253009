import { runAdminCli } from '../../src/cli/admin.js';
import { ADMIN_TOKEN, type TestApp } from './harness.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The admin CLI's own code, in-process, against a test's server: no Node start per command
 * (test/checkout/admin-cli.test.ts proves the program itself once, as a real process).
 */
export async function adminCli(t: TestApp, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCli(
    args,
    { ADMIN_URL: t.baseUrl, ADMIN_TOKEN },
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
  );
  return { code, stdout, stderr };
}
