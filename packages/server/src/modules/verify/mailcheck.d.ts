/** The part of mailcheck (no bundled types; @types/mailcheck needs jQuery's) that Pigeon uses. */
declare module 'mailcheck' {
  interface Suggestion {
    address: string;
    domain: string;
    full: string;
  }
  const Mailcheck: {
    defaultDomains: string[];
    defaultSecondLevelDomains: string[];
    defaultTopLevelDomains: string[];
    run(options: {
      email: string;
      domains?: string[];
      secondLevelDomains?: string[];
      topLevelDomains?: string[];
    }): Suggestion | undefined | false;
  };
  export default Mailcheck;
}
