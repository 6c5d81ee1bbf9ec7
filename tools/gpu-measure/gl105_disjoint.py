"""GL105: an actor-critic update whose value and Q losses come from separate networks and detached
targets, each backpropagated with retain_graph=True: the retained graphs are needed by nothing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
S, A, H, B = 64, 8, 2048, 4096


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, o)).to(DEV)


def main():
    torch.manual_seed(0)
    value_net, q_net, policy = mlp(S, 1), mlp(S + A, 1), mlp(S, A)
    vopt = torch.optim.Adam(value_net.parameters(), 1e-4)
    qopt = torch.optim.Adam(q_net.parameters(), 1e-4)
    popt = torch.optim.Adam(policy.parameters(), 1e-4)
    for step in range(1000):
        s = torch.randn(B, S, device=DEV)
        a = torch.randn(B, A, device=DEV)
        target = torch.randn(B, 1, device=DEV)
        v = value_net(s)
        q = q_net(torch.cat([s, a], 1))
        logp = policy(s).log_softmax(-1).mean(-1, keepdim=True)
        v_loss = F.mse_loss(v, target.detach())
        q_loss = F.mse_loss(q, target.detach())
        p_loss = (logp * (logp - q).detach()).mean()
        vopt.zero_grad()
        v_loss.backward(retain_graph=True)
        vopt.step()
        qopt.zero_grad()
        q_loss.backward(retain_graph=True)
        qopt.step()
        popt.zero_grad()
        p_loss.backward()
        popt.step()


if __name__ == "__main__":
    main()
