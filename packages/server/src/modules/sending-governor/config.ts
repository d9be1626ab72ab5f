/** How the governor paces each mailbox provider's group (GOVERNOR_* settings). */
export interface GovernorConfig {
  enabled: boolean;
  maxRate: number;
  minRate: number;
  decreaseFactor: number;
  recoveryPerSecond: number;
}
