"""The user's flows: the Qt controllers Application wires, one flow each."""
