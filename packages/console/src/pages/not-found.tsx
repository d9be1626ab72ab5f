import { Link } from 'react-router';
import { AuthFrame } from './auth/frame';

export default function NotFoundPage() {
  return (
    <AuthFrame title="Page not found">
      <p>There is no page at this address.</p>
      <Link to="/">Open the console</Link>
    </AuthFrame>
  );
}
