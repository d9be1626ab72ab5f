import type { Campaign } from '@pigeon/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { projectPath, useProject } from '../../session';

/** Duplicate (opens the copy) and delete (back to the list): the same on a draft and on a campaign that ran. */
export function useCampaignActions(campaign: Campaign, onSettled?: () => void) {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const duplicate = useMutation({
    mutationFn: () => api.campaigns.duplicate(campaign.id),
    onSuccess: (copy) => navigate(projectPath(project.id, `campaigns/${copy.id}`)),
  });
  const remove = useMutation({
    mutationFn: () => api.campaigns.delete(campaign.id),
    onSuccess: () => {
      queryClient.invalidateQueries({ queryKey: ['campaigns'] });
      navigate(projectPath(project.id, 'campaigns'));
    },
    onSettled,
  });
  return { duplicate, remove };
}
