import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { account } from '../api';
import { projectPath } from '../session';
import { ErrorNote, Field, Form } from '../ui/kit';
import { AuthFrame } from './auth/frame';

export default function NewProjectPage() {
  const [name, setName] = useState('');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: () => account.me.createProject(name),
    onSuccess: async (project) => {
      await queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate(projectPath(project.id));
    },
  });
  return (
    <AuthFrame title="Create a project">
      <p className="muted">A project has its own keys, domains, contacts and mail. You become its owner.</p>
      <Form onSubmit={() => create.mutate()}>
        <ErrorNote error={create.error} />
        <Field
          label="Name"
          name="name"
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={create.error}
        />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create project
        </button>
      </Form>
    </AuthFrame>
  );
}
