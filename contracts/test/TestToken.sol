// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Test-only ERC-20: anyone may mint and block addresses. Transfers to or from a blocked
/// address revert, like USDC's blacklist. With `returnsNothing`, transfer and transferFrom
/// return no data, like USDT on Ethereum.
contract TestToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    bool public immutable returnsNothing;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public blocked;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error Blocked(address account);
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 needed);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, bool returnsNothing_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        returnsNothing = returnsNothing_;
    }

    function mint(address to, uint256 amount) external {
        if (blocked[to]) revert Blocked(to);
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function setBlocked(address account, bool isBlocked) external {
        blocked[account] = isBlocked;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return _ok();
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(from, msg.sender, allowed, amount);
            allowance[from][msg.sender] = allowed - amount;
        }
        _move(from, to, amount);
        return _ok();
    }

    function _move(address from, address to, uint256 amount) private {
        if (blocked[from]) revert Blocked(from);
        if (blocked[to]) revert Blocked(to);
        uint256 balance = balanceOf[from];
        if (balance < amount) revert InsufficientBalance(from, balance, amount);
        balanceOf[from] = balance - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }

    function _ok() private view returns (bool) {
        if (returnsNothing) {
            assembly ("memory-safe") {
                return(0, 0)
            }
        }
        return true;
    }
}
