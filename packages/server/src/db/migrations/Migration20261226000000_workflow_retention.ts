import { Migration } from '@mikro-orm/migrations';

/**
 * Finished workflow executions follow the project's event retention: `history_cleared` marks one
 * whose context (the trigger event's data) and step runs retention has removed, and the partial
 * index holds only the finished executions retention has still to visit, oldest first per project.
 */
export class Migration20261226000000_workflow_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      ALTER TABLE workflow_executions ADD COLUMN history_cleared boolean NOT NULL DEFAULT false;
      CREATE INDEX workflow_executions_expiring ON workflow_executions (project_id, completed_at)
        WHERE status IN ('COMPLETED', 'EXITED', 'FAILED', 'CANCELLED') AND NOT history_cleared;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      DROP INDEX IF EXISTS workflow_executions_expiring;
      ALTER TABLE workflow_executions DROP COLUMN history_cleared;
    `);
  }
}
