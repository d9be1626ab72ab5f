import { Migration } from '@mikro-orm/migrations';

/**
 * Each process running workers writes its row every few seconds: readiness ("is any worker
 * alive?"), `pigeon status` and the `pigeon_workers_alive` gauge read it, from any host. The row
 * also carries the last delivery error that process saw.
 */
export class Migration20261203000000_worker_heartbeats extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE worker_heartbeats (
        id text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        version text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now(),
        last_error text,
        last_error_at timestamptz
      );
    `);
  }
}
