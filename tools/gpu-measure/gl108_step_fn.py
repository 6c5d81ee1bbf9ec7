"""GL108, function form: train(epoch) makes one step over the whole graph, then runs the model
again on the full input for the validation loss with grad on (the GCN/GAT tutorial shape)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
N, D, H, C = 20000, 512, 1024, 16

torch.manual_seed(0)
feats = torch.randn(N, D, device=DEV)
labels = torch.randint(0, C, (N,), device=DEV)
idx_train = torch.arange(0, 2000, device=DEV)
idx_val = torch.arange(2000, 4000, device=DEV)
model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Dropout(0.5), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, C)).to(DEV)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(feats[idx_train])
    loss_train = F.cross_entropy(output, labels[idx_train])
    loss_train.backward()
    optimizer.step()
    model.eval()
    output = model(feats)
    loss_val = F.cross_entropy(output[idx_val], labels[idx_val])
    return loss_val.item()


for epoch in range(1000):
    train(epoch)
