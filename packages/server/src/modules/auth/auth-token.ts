export type TokenPurpose = 'VERIFY_EMAIL' | 'RESET_PASSWORD';
