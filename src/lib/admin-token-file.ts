import path from 'node:path';

/**
 * Where the server saves the admin token it generates: one place, read by the server at start and
 * by the admin CLI, so both find the same file from the same DATA_DIR default.
 */
export function adminTokenFile(dataDir: string): string {
  return path.join(dataDir, 'admin-token');
}
