import { Migration } from '@mikro-orm/migrations';

/**
 * A sender domain's warm-up (issue 64): its settings and the count of the current day (UTC), one
 * row per domain. `day` is the day `sent_today` counts; a row of an earlier day counts zero today.
 */
export class Migration20270105000000_sender_warmups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE sender_warmups (
        project_id uuid NOT NULL,
        domain text NOT NULL,
        enabled boolean NOT NULL,
        start_cap integer NOT NULL CHECK (start_cap > 0),
        target_cap integer NOT NULL CHECK (target_cap >= start_cap),
        ramp_days integer NOT NULL CHECK (ramp_days > 0),
        started_on date NOT NULL,
        day date NOT NULL,
        sent_today integer NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, domain),
        FOREIGN KEY (project_id, domain) REFERENCES domains (project_id, domain) ON DELETE CASCADE
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql('DROP TABLE sender_warmups;');
  }
}
