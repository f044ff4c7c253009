import type pg from 'pg';

export interface DiskFigures {
  payments: number;
  totalBytes: number;
  tables: { name: string; bytes: number; rows: number }[];
  indexes: { name: string; table: string; bytes: number; scans: number }[];
  /** Rows in each default partition (none on a schema without partitions): rows no month partition took. */
  defaultPartitions: { name: string; rows: number }[];
}

/**
 * Bytes on disk of every table of the schema (heap, TOAST and indexes; a partitioned table's
 * partitions counted under their parent), each index's size and its scans so far.
 */
export async function measureDisk(client: pg.Client): Promise<DiskFigures> {
  const payments = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM payments')).rows[0]!.n);
  const tables = await client.query<{ name: string; bytes: string; rows: string }>(
    `SELECT coalesce(parent.relname, c.relname) AS name, sum(pg_total_relation_size(c.oid))::text AS bytes,
       sum(greatest(c.reltuples, 0))::bigint::text AS rows
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class parent ON parent.oid = i.inhparent
     WHERE c.relkind = 'r' AND c.relname NOT LIKE 'growth_%'
     GROUP BY 1 ORDER BY sum(pg_total_relation_size(c.oid)) DESC`,
  );
  const indexes = await client.query<{ name: string; table: string; bytes: string; scans: string }>(
    `SELECT coalesce(pi.relname, s.indexrelname) AS name, coalesce(pt.relname, s.relname) AS table,
       sum(pg_relation_size(s.indexrelid))::text AS bytes, sum(s.idx_scan)::text AS scans
     FROM pg_stat_user_indexes s
     LEFT JOIN pg_inherits ii ON ii.inhrelid = s.indexrelid LEFT JOIN pg_class pi ON pi.oid = ii.inhparent
     LEFT JOIN pg_inherits it ON it.inhrelid = s.relid LEFT JOIN pg_class pt ON pt.oid = it.inhparent
     WHERE s.schemaname = 'public' AND s.relname NOT LIKE 'growth_%'
     GROUP BY 1, 2 ORDER BY sum(pg_relation_size(s.indexrelid)) DESC`,
  );
  const defaults = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
     WHERE c.relkind = 'r' AND pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' ORDER BY 1`,
  );
  const defaultPartitions = [];
  for (const { name } of defaults.rows) {
    const counted = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
    defaultPartitions.push({ name, rows: Number(counted.rows[0]!.n) });
  }
  const tableRows = tables.rows.map((row) => ({ name: row.name, bytes: Number(row.bytes), rows: Number(row.rows) }));
  return {
    payments,
    totalBytes: tableRows.reduce((sum, row) => sum + row.bytes, 0),
    tables: tableRows,
    defaultPartitions,
    indexes: indexes.rows.map((row) => ({
      name: row.name,
      table: row.table,
      bytes: Number(row.bytes),
      scans: Number(row.scans),
    })),
  };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** Per payment, per million payments and per year at 9 million payments a day; the biggest tables and indexes; unused indexes. */
export function printDisk(size: string, disk: DiskFigures): void {
  const perPayment = disk.totalBytes / Math.max(1, disk.payments);
  console.log(
    `\nDisk at ${size}: ${mb(disk.totalBytes)} for ${disk.payments.toLocaleString('en')} payments: ` +
      `${perPayment.toFixed(0)} bytes per payment, ${(perPayment / 1e3).toFixed(2)} GB per million payments, ` +
      `${((perPayment * 9e6 * 365) / 1e12).toFixed(1)} TB a year at 9 million payments a day`,
  );
  for (const table of disk.tables.slice(0, 12)) {
    const indexBytes = disk.indexes
      .filter((index) => index.table === table.name)
      .reduce((sum, index) => sum + index.bytes, 0);
    console.log(
      `  ${table.name.padEnd(28)} ${mb(table.bytes).padStart(11)}  indexes ${mb(indexBytes).padStart(10)}  ` +
        `${table.rows.toLocaleString('en').padStart(12)} rows  ${(table.bytes / Math.max(1, disk.payments)).toFixed(0).padStart(6)} B/payment`,
    );
  }
  if (disk.defaultPartitions.length > 0) {
    const rows = disk.defaultPartitions.map(({ name, rows }) => `${name} ${rows.toLocaleString('en')}`).join(', ');
    console.log(`  rows in default partitions (should be 0: every month has its partition): ${rows}`);
  }
  console.log('  biggest indexes:');
  for (const index of disk.indexes.slice(0, 12)) {
    console.log(`    ${index.name.padEnd(48)} ${mb(index.bytes).padStart(11)}  ${index.scans} scans`);
  }
  const unused = disk.indexes.filter((index) => index.scans === 0 && index.bytes >= 1 << 20);
  console.log(`  indexes of 1 MB or more never scanned during the measurement (candidates, not verdicts):`);
  for (const index of unused) console.log(`    ${index.name.padEnd(48)} ${mb(index.bytes).padStart(11)}`);
}
